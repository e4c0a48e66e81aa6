/**
 * An idempotency claim is released even when Redis cannot answer the release at the time
 * (src/coordination/claim-releases.ts): a claim written by a command whose answer was lost, a
 * release sent to a paused Redis, and one whose connection was dropped are all gone once Redis
 * answers again, so the retry of a request that answered 503 starts instead of getting 409. A real
 * redis-server, its own for this file.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createClient } from 'redis'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { CoordinationUnavailable } from '../../src/coordination/unavailable'
import { randomId } from '../../src/ids'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

// The in-flight claim's length in the service (http/idempotency.ts IN_FLIGHT_TTL_MS): a claim left
// behind would answer 409 this long, far longer than any of these tests waits.
const CLAIM_TTL_MS = 120_000

const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (error: unknown) => error,
  )

describeWithRedis('an idempotency claim released while Redis cannot answer', () => {
  let redis: RedisServer
  let c: Coordination
  let admin: ReturnType<typeof createClient>
  beforeAll(async () => {
    redis = await startRedis()
    c = await openRedisCoordination(redis.url, { prefix: `claims:${randomId()}:`, onError: () => {} })
    admin = createClient({ url: redis.url })
    admin.on('error', () => {})
    await admin.connect()
  })
  afterAll(async () => {
    await c?.close()
    admin?.destroy()
    await redis?.stop()
  })

  test('paused: a claim whose answer was lost, released, is gone once Redis resumes', async () => {
    redis.pause(true)
    try {
      expect(await failure(c.idempotencyBegin('lost-answer', CLAIM_TTL_MS, 'request-1'))).toBeInstanceOf(CoordinationUnavailable)
      expect(await failure(c.idempotencyRelease('lost-answer', 'request-1'))).toBeInstanceOf(CoordinationUnavailable)
    } finally {
      redis.pause(false)
    }
    expect(await c.idempotencyBegin('lost-answer', CLAIM_TTL_MS, 'request-2')).toEqual({ state: 'started' })
  }, 60_000)

  test('paused: a claim released while Redis stalls is gone once it resumes', async () => {
    expect(await c.idempotencyBegin('stalled', CLAIM_TTL_MS, 'request-1')).toEqual({ state: 'started' })
    redis.pause(true)
    try {
      expect(await failure(c.idempotencyRelease('stalled', 'request-1'))).toBeInstanceOf(CoordinationUnavailable)
    } finally {
      redis.pause(false)
    }
    expect(await c.idempotencyBegin('stalled', CLAIM_TTL_MS, 'request-2')).toEqual({ state: 'started' })
  }, 60_000)

  test('a release whose connection dropped is sent again, and frees the claim', async () => {
    expect(await c.idempotencyBegin('dropped', CLAIM_TTL_MS, 'request-1')).toEqual({ state: 'started' })
    // Writes wait (Redis keeps its data, unlike a crash); the release's connection is then cut.
    await admin.sendCommand(['CLIENT', 'PAUSE', String(CLAIM_TTL_MS), 'WRITE'])
    try {
      expect(await failure(c.idempotencyRelease('dropped', 'request-1'))).toBeInstanceOf(CoordinationUnavailable)
      await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'])
    } finally {
      await admin.sendCommand(['CLIENT', 'UNPAUSE'])
    }
    await until(
      'the claim released',
      () => c.idempotencyBegin('dropped', CLAIM_TTL_MS, 'request-2').catch(() => null),
      (begun) => begun?.state === 'started',
      { withinMs: 20_000, everyMs: 200 },
    )
  }, 60_000)
})
