/** Runs the file-storage contract against MongoDB GridFS when MONGODB_URL is set (none on dev machines). */
import { afterAll, describe } from 'bun:test'
import { MongoClient } from 'mongodb'
import { openGridFsStorage } from '../../src/files/gridfs'
import { fileStorageContract } from './contract'

const url = process.env.MONGODB_URL
const dbName = `files_contract_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`

describe.skipIf(!url)('gridfs adapter', () => {
  fileStorageContract('gridfs', () => openGridFsStorage(url!, dbName))

  afterAll(async () => {
    const client = await new MongoClient(url!).connect()
    try {
      await client.db(dbName).dropDatabase()
    } finally {
      await client.close()
    }
  })
})
