import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openCoordination } from '../../src/coordination'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { randomId } from '../../src/ids'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'
import { coordinationContract } from './contract'

describeWithRedis('coordination on a real Redis', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })

  // A fresh key prefix per instance keeps tests apart on the one server.
  coordinationContract('redis', () => openRedisCoordination(redis.url, { prefix: `test:${randomId()}:` }))

  describe('redis coordination across instances', () => {
    let a: Coordination
    let b: Coordination
    beforeAll(async () => {
      // Two adapters on one prefix: two service instances sharing a Redis.
      const prefix = `shared:${randomId()}:`
      a = await openRedisCoordination(redis.url, { prefix })
      b = await openRedisCoordination(redis.url, { prefix })
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
    })

    test('instances share leases', async () => {
      expect(await a.acquireLease('campaign:1', 'instance-a', 60_000)).toBe(true)
      expect(await b.acquireLease('campaign:1', 'instance-b', 60_000)).toBe(false)
      expect(await b.leaseOwner('campaign:1')).toBe('instance-a')
      await b.releaseLease('campaign:1', 'instance-b')
      expect(await b.leaseOwner('campaign:1')).toBe('instance-a')
      await a.releaseLease('campaign:1', 'instance-a')
      expect(await b.acquireLease('campaign:1', 'instance-b', 60_000)).toBe(true)
    })

    test('a message published by one instance reaches subscribers on both', async () => {
      const onA: string[] = []
      const onB: string[] = []
      const offA = await a.subscribe('events', (m) => onA.push(m))
      const offB = await b.subscribe('events', (m) => onB.push(m))
      await b.publish('events', 'from-b')
      await until('delivery on both instances', () => onA.length === 1 && onB.length === 1)
      expect([onA, onB]).toEqual([['from-b'], ['from-b']])
      await offA()
      await offB()
    })

    test('a timer claimed by one instance is not handed to the other', async () => {
      const now = Date.now()
      await a.scheduleTimer({ id: 'shared-timer', dueAt: now, payload: { n: 1 } })
      expect(await b.pendingTimers()).toBe(1)
      const [claimed] = await b.claimDueTimers(now, 10, 60_000)
      expect(claimed).toMatchObject({ id: 'shared-timer', payload: { n: 1 } })
      expect(await a.claimDueTimers(now, 10, 60_000)).toEqual([])
      await a.ackTimer('shared-timer', claimed.claim) // any instance may ack with the claim
      expect(await a.pendingTimers()).toBe(0)
      expect(await b.pendingTimers()).toBe(0)
    })

    test('instances racing for due timers never get the same one', async () => {
      const now = Date.now()
      for (let i = 0; i < 20; i++) await a.scheduleTimer({ id: `race-${i}`, dueAt: now, payload: i })
      const seen: string[] = []
      // Both instances claim in parallel, small batches, until nothing is left.
      for (let round = 0; round < 10 && seen.length < 20; round++) {
        const batches = await Promise.all([a.claimDueTimers(now, 3, 60_000), b.claimDueTimers(now, 3, 60_000)])
        for (const t of batches.flat()) {
          seen.push(t.id)
          await (seen.length % 2 ? a : b).ackTimer(t.id, t.claim)
        }
      }
      expect(seen.length).toBe(20)
      expect(new Set(seen).size).toBe(20)
      expect(await a.pendingTimers()).toBe(0)
    })

    test('instances racing on one idempotency key: exactly one starts', async () => {
      const results = await Promise.all([a, b, a, b].map((c) => c.idempotencyBegin('race-key', 60_000)))
      expect(results.filter((r) => r.state === 'started')).toHaveLength(1)
      expect(results.filter((r) => r.state === 'in_flight')).toHaveLength(3)
    })

    test('prefixes isolate deployments on one Redis', async () => {
      const other = await openRedisCoordination(redis.url, { prefix: `other:${randomId()}:` })
      try {
        await a.scheduleTimer({ id: 'mine', dueAt: 0, payload: null })
        expect(await other.pendingTimers()).toBe(0)
        expect(await other.acquireLease('campaign:1', 'x', 60_000)).toBe(true)
        await a.cancelTimer('mine')
      } finally {
        await other.close()
      }
    })

    test('openCoordination picks Redis when a URL is set', async () => {
      const c = await openCoordination({ dataDir: '/nonexistent-not-used', redisUrl: redis.url })
      expect(c.kind).toBe('redis')
      await c.close()
    })
  })
})
