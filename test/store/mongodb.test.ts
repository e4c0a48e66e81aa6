/** Runs the store contract against a real MongoDB when MONGODB_URL is set (none on dev machines). */
import { afterAll, describe } from 'bun:test'
import { MongoClient } from 'mongodb'
import { openMongoStore } from '../../src/store/mongodb'
import { storeContract } from './contract'

const url = process.env.MONGODB_URL
const dbName = `store_contract_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`

describe.skipIf(!url)('mongodb adapter', () => {
  storeContract('mongodb', () => openMongoStore(url!, dbName))

  afterAll(async () => {
    const client = await new MongoClient(url!).connect()
    try {
      await client.db(dbName).dropDatabase()
    } finally {
      await client.close()
    }
  })
})
