/**
 * The event bus: every event recorded once with an id, local subscribers on the publishing
 * instance, cluster subscribers on every instance (through Redis when configured), and no event
 * lost between recording and dispatching (start re-dispatches, failures are retried, a lease keeps
 * two instances from dispatching the same event).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import pino from 'pino'
import { ManualClock } from '../../src/clock'
import { openLocalCoordination } from '../../src/coordination/local'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { EventBus, type RecordedEvent } from '../../src/events/bus'
import { randomId } from '../../src/ids'
import type { DocumentStore } from '../../src/store/port'
import { openSqliteStore } from '../../src/store/sqlite'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

const logger = pino({ level: 'silent' })
const clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'))
const event = (n = 1) => ({ type: 'lead.captured' as const, workspaceId: 'ws_1', agentId: 'ag_1', data: { n } })

async function fresh(): Promise<{ store: DocumentStore; coordination: Coordination; bus: EventBus }> {
  const store = await openSqliteStore(':memory:')
  const coordination = await openLocalCoordination(':memory:')
  return { store, coordination, bus: await EventBus.open(store, coordination, clock, logger) }
}

describe('recording and local dispatch', () => {
  test('publish records the event once with an id, runs local subscribers once, marks it dispatched', async () => {
    const { bus } = await fresh()
    const seen: RecordedEvent[] = []
    bus.subscribe((e) => void seen.push(e))
    const recorded = await bus.publish(event())
    expect(recorded.id).toStartWith('evt_')
    expect(recorded.createdAt).toBe('2026-03-01T10:00:00.000Z')
    expect(seen.map((e) => e.id)).toEqual([recorded.id])
    const stored = await bus.events.get(recorded.id)
    expect(stored).toMatchObject({ type: 'lead.captured', workspaceId: 'ws_1', agentId: 'ag_1', data: { n: 1 }, dispatched: true })
    expect(await bus.start()).toBe(0)
    expect(seen).toHaveLength(1)
    await bus.close()
  })

  test('publishing with a given id is idempotent: the same id is recorded and dispatched once', async () => {
    const { bus } = await fresh()
    const seen: string[] = []
    bus.subscribe((e) => void seen.push(e.id))
    const first = await bus.publish(event(1), { id: 'call:out_1:1' })
    const again = await bus.publish(event(2), { id: 'call:out_1:1' })
    expect(first.id).toBe('call:out_1:1')
    expect(again).toMatchObject({ id: 'call:out_1:1', data: { n: 1 } })
    expect(seen).toEqual(['call:out_1:1'])
    await bus.close()
  })

  test('an event left undispatched (a crash between) is dispatched when published again by its id, before publish resolves, once', async () => {
    const { bus } = await fresh()
    const seen: string[] = []
    bus.subscribe((e) => void seen.push(e.id))
    await bus.events.insert({ ...event(1), id: 'call:out_2:1', createdAt: '2026-03-01T10:00:00.000Z', dispatched: false })
    // The actor hands its outbox over again after the restart: the call's next event must come after this one.
    const again = await bus.publish(event(1), { id: 'call:out_2:1' })
    expect(seen).toEqual(['call:out_2:1'])
    expect(again).toMatchObject({ id: 'call:out_2:1', dispatched: true })
    expect(await bus.events.get('call:out_2:1')).toMatchObject({ dispatched: true })
    await bus.publish(event(1), { id: 'call:out_2:1' })
    expect(await bus.start()).toBe(0)
    expect(seen).toEqual(['call:out_2:1'])
    await bus.close()
  })

  test('an event recorded but not dispatched (a crash) is dispatched by start(), once', async () => {
    const { bus } = await fresh()
    const seen: string[] = []
    bus.subscribe((e) => void seen.push(e.id))
    const a = await bus.record(event(1))
    const b = await bus.record(event(2))
    expect(seen).toEqual([])
    expect(await bus.start()).toBe(2)
    expect(seen).toEqual([a.id, b.id])
    expect((await bus.events.get(a.id))?.dispatched).toBe(true)
    expect(await bus.redispatch()).toBe(0)
    expect(seen).toHaveLength(2)
    await bus.close()
  })

  test('a failing subscriber leaves the event for the sweep; the others still ran; a retry completes it', async () => {
    const { bus } = await fresh()
    let fail = true
    const good: string[] = []
    bus.subscribe(() => {
      if (fail) throw new Error('store hiccup')
    })
    bus.subscribe((e) => void good.push(e.id))
    const e = await bus.publish(event())
    expect(good).toEqual([e.id])
    expect(await bus.events.get(e.id)).toMatchObject({ dispatched: false, dispatchAttempts: 1 })
    fail = false
    expect(await bus.redispatch()).toBe(1)
    expect((await bus.events.get(e.id))?.dispatched).toBe(true)
    await bus.close()
  })

  test('a subscriber that always fails is given up on after 5 dispatches, with the error kept', async () => {
    const { bus } = await fresh()
    bus.subscribe(() => {
      throw new Error('bug')
    })
    const e = await bus.publish(event())
    for (let i = 0; i < 4; i++) await bus.redispatch()
    expect(await bus.events.get(e.id)).toMatchObject({ dispatched: true, dispatchError: 'bug' })
    expect(await bus.redispatch()).toBe(0)
    await bus.close()
  })

  test('what a subscriber owes is committed with dispatched: true, and started only after; a failed dispatch owes nothing and says so', async () => {
    const { store, bus } = await fresh()
    const owed = await store.collection<{ id: string; [k: string]: unknown }>({ name: 'owed_things', indexes: [] })
    let fail = true
    const started: string[] = []
    const abandoned: string[] = []
    bus.subscribe(async (e) => ({
      writes: [{ collection: 'owed_things', op: 'upsert' as const, doc: { id: `owed_${e.id}` } }],
      start: () => void started.push(e.id),
      abandon: () => void abandoned.push(e.id),
    }))
    bus.subscribe(() => {
      if (fail) throw new Error('store hiccup')
    })
    const e = await bus.publish(event())
    expect(await bus.events.get(e.id)).toMatchObject({ dispatched: false })
    expect(await owed.get(`owed_${e.id}`)).toBeNull()
    expect(started).toEqual([])
    expect(abandoned).toEqual([e.id])
    fail = false
    expect(await bus.redispatch()).toBe(1)
    expect(await bus.events.get(e.id)).toMatchObject({ dispatched: true })
    expect(await owed.get(`owed_${e.id}`)).toEqual({ id: `owed_${e.id}` })
    expect(started).toEqual([e.id])
    expect(abandoned).toEqual([e.id])
    await bus.close()
  })

  test('an event another instance is dispatching (it holds the lease) is left alone', async () => {
    const { coordination, bus } = await fresh()
    const seen: string[] = []
    bus.subscribe((e) => void seen.push(e.id))
    const e = await bus.record(event())
    expect(await coordination.acquireLease(`event:${e.id}`, 'other-instance', 60_000)).toBe(true)
    expect(await bus.redispatch()).toBe(0)
    expect(seen).toEqual([])
    await coordination.releaseLease(`event:${e.id}`, 'other-instance')
    expect(await bus.redispatch()).toBe(1)
    expect(seen).toEqual([e.id])
    await bus.close()
  })
})

describe('an event committed with the write it reports (publishWith)', () => {
  test('the writes and the event land together, the event is dispatched once, each write answers', async () => {
    const { store, bus } = await fresh()
    const docs = await store.collection({ name: 'replies', indexes: [] })
    await docs.insert({ id: 'conv', status: 'active' })
    const seen: RecordedEvent[] = []
    bus.subscribe((e) => void seen.push(e))
    const { event: recorded, results } = await bus.publishWith(event(), [
      { collection: 'replies', op: 'insert', doc: { id: 'msg', text: 'hi' } },
      { collection: 'replies', op: 'update', id: 'conv', set: { status: 'escalated' } },
    ])
    expect(results).toEqual([
      { id: 'msg', text: 'hi' },
      { id: 'conv', status: 'escalated' },
    ])
    expect(await docs.get('msg')).toEqual({ id: 'msg', text: 'hi' })
    expect(seen.map((e) => e.id)).toEqual([recorded.id])
    expect(await bus.events.get(recorded.id)).toMatchObject({ type: 'lead.captured', dispatched: true })
    expect(await bus.start()).toBe(0)
    await bus.close()
  })

  test('a write that fails records no event; the next one goes through', async () => {
    const { store, bus } = await fresh()
    const docs = await store.collection({ name: 'replies', indexes: [] })
    await docs.insert({ id: 'msg' })
    const seen: string[] = []
    bus.subscribe((e) => void seen.push(e.id))
    await expect(bus.publishWith(event(), [{ collection: 'replies', op: 'insert', doc: { id: 'msg' } }])).rejects.toThrow(/duplicate key/)
    expect(await bus.events.count({})).toBe(0)
    expect(seen).toEqual([])
    const next = await bus.publishWith(event(2), [{ collection: 'replies', op: 'insert', doc: { id: 'msg2' } }])
    expect(seen).toEqual([next.event.id])
    await bus.close()
  })
})

describeWithRedis('fan-out across instances', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })

  test('through Redis: cluster subscribers on every instance, local ones only where it was published', async () => {
    const prefix = `bus:${randomId()}:`
    const store = await openSqliteStore(':memory:')
    const [ca, cb] = await Promise.all([openRedisCoordination(redis.url, { prefix }), openRedisCoordination(redis.url, { prefix })])
    const a = await EventBus.open(store, ca, clock, logger, 'instance-a')
    const b = await EventBus.open(store, cb, clock, logger, 'instance-b')
    const seen = { aLocal: [] as string[], bLocal: [] as string[], aCluster: [] as string[], bCluster: [] as RecordedEvent[] }
    a.subscribe((e) => void seen.aLocal.push(e.id))
    b.subscribe((e) => void seen.bLocal.push(e.id))
    a.subscribe((e) => void seen.aCluster.push(e.id), 'cluster')
    b.subscribe((e) => void seen.bCluster.push(e), 'cluster')
    const e = await a.publish(event(7))
    // Cluster messages cross a pub/sub hop; until's 2 s is far above a loopback round trip.
    await until('both instances to hear the event', () => seen.aCluster.length === 1 && seen.bCluster.length === 1)
    expect(seen.aLocal).toEqual([e.id])
    expect(seen.bLocal).toEqual([])
    expect(seen.bCluster[0]).toMatchObject({ id: e.id, type: 'lead.captured', data: { n: 7 }, dispatched: true })
    await a.close()
    await b.close()
    await ca.close()
    await cb.close()
  })
})
