/**
 * Runs the store contract against a real MongoDB when MONGODB_URL is set (none on the build
 * machines, so CI runs the contract against SQLite only). `npm run test:mongo` runs this file
 * against the compose file's MongoDB (docs/testing.md) and fails, rather than skips, without one.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { MongoClient } from 'mongodb'
import pino from 'pino'
import { ManualClock } from '../../src/clock'
import { openLocalCoordination } from '../../src/coordination/local'
import { EventBus } from '../../src/events/bus'
import { openMongoStore } from '../../src/store/mongodb'
import { storeContract } from './contract'

const url = process.env.MONGODB_URL
const dbName = `store_contract_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`

if (process.env.MONGODB_REQUIRED) {
  const start = 'start it with `docker compose up -d mongo` (docs/testing.md)'
  if (!url) throw new Error(`MONGODB_URL is not set: ${start}`)
  // One clear line instead of every test timing out on the connection.
  const probe = new MongoClient(url, { serverSelectionTimeoutMS: 3_000 })
  await probe.connect().catch((err: Error) => {
    throw new Error(`no MongoDB answers at ${url}: ${start} (${err.message})`)
  })
  await probe.close()
}

describe.skipIf(!url)('mongodb adapter', () => {
  storeContract('mongodb', () => openMongoStore(url!, dbName))

  test('the server takes transactions (a replica set), so a write and its event commit together', async () => {
    const store = await openMongoStore(url!, dbName)
    try {
      // A standalone server cannot: run it as a replica set of one (docker-compose.yml does).
      expect(store.atomic).toBe(true)
    } finally {
      await store.close()
    }
  })

  test('an event and the writes it reports: committed together, the event dispatched once', async () => {
    const store = await openMongoStore(url!, dbName)
    const coordination = await openLocalCoordination(':memory:')
    const bus = await EventBus.open(store, coordination, new ManualClock(Date.parse('2026-03-01T10:00:00.000Z')), pino({ level: 'silent' }))
    try {
      const replies = await store.collection({ name: `replies_${dbName}`, indexes: [] })
      const seen: string[] = []
      bus.subscribe((e) => void seen.push(e.id))
      const event = { type: 'lead.captured' as const, workspaceId: 'ws_1', agentId: 'ag_1', data: {} }
      const { event: recorded } = await bus.publishWith(event, [{ collection: replies.name, op: 'insert', doc: { id: 'msg_1' } }])
      expect(seen).toEqual([recorded.id])
      expect(await bus.events.get(recorded.id)).toMatchObject({ dispatched: true })
      // A failing write leaves no event behind.
      await expect(bus.publishWith(event, [{ collection: replies.name, op: 'insert', doc: { id: 'msg_1' } }])).rejects.toThrow(/duplicate key/)
      expect(await bus.events.count({ workspaceId: 'ws_1' })).toBe(1)
    } finally {
      await bus.close()
      await coordination.close()
      await store.close()
    }
  })

  afterAll(async () => {
    const client = await new MongoClient(url!).connect()
    try {
      await client.db(dbName).dropDatabase()
    } finally {
      await client.close()
    }
  })
})
