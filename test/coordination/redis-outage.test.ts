/**
 * Every Redis operation is bounded (src/coordination/unavailable.ts): on a paused server (socket
 * open, no answers) and on a dead one, operations fail with CoordinationUnavailable naming the
 * operation instead of waiting; a command's own error (a wrong argument) still passes through as
 * it is; the adapter still closes. A real redis-server, its own for this file.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { CoordinationUnavailable } from '../../src/coordination/unavailable'
import { randomId } from '../../src/ids'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'

// Far above the 5 s bound: an operation still pending this long is hanging.
const HANGING_MS = 20_000

const settle = <T>(p: Promise<T>) =>
  Promise.race([
    p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    Bun.sleep(HANGING_MS).then(() => ({ hanging: true })),
  ])

describeWithRedis('Redis out of service, at the adapter', () => {
  let redis: RedisServer
  let c: Coordination
  beforeAll(async () => {
    redis = await startRedis()
    c = await openRedisCoordination(redis.url, { prefix: `outage:${randomId()}:`, onError: () => {} })
  })
  afterAll(async () => {
    await redis?.stop()
  })

  test('paused: operations fail as unavailable, naming the operation; they work again once it resumes', async () => {
    expect(await c.acquireLease('l', 'me', 60_000)).toBe(true)
    redis.pause(true)
    try {
      const lease = await settle(c.acquireLease('l', 'me', 60_000))
      expect('error' in lease && lease.error).toBeInstanceOf(CoordinationUnavailable)
      expect('error' in lease && (lease.error as Error).message).toContain('acquireLease')
      const ping = await settle(c.ping())
      expect('error' in ping && ping.error).toBeInstanceOf(CoordinationUnavailable)
    } finally {
      redis.pause(false)
    }
    expect(await c.acquireLease('l', 'me', 60_000)).toBe(true)
    await c.ping()
  }, 60_000)

  test("a command's own error is not an outage", async () => {
    const bad = await settle(c.rateHit('r', -1, 1000, Date.now()))
    expect('error' in bad).toBe(true)
    expect('error' in bad && bad.error).not.toBeInstanceOf(CoordinationUnavailable)
  })

  test('killed: operations fail as unavailable, and close still returns', async () => {
    const off = await c.subscribe('ch', () => {})
    await redis.crash()
    const first = await settle(c.rateHit('r', 10, 1000, Date.now()))
    expect('error' in first && first.error).toBeInstanceOf(CoordinationUnavailable)
    const next = await settle(c.scheduleTimer({ id: 't', dueAt: Date.now(), payload: {} }))
    expect('error' in next && next.error).toBeInstanceOf(CoordinationUnavailable)
    expect(await settle(off())).toEqual({ value: undefined })
    expect(await settle(c.close())).toEqual({ value: undefined })
  }, 60_000)
})
