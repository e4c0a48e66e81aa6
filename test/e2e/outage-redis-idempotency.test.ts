/**
 * A 503 frees its Idempotency-Key (docs/spec.md Conventions rule 6): with Redis paused (SIGSTOP),
 * a request with a key answers 503 "nothing was done; retry shortly"; once Redis resumes, the same
 * request with the same key goes through instead of answering 409 "still being processed" until
 * the claim its stalled command wrote lapses. The real service in Redis mode, a real redis-server.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startRedis } from '../support/redis'
import { startTestServer, type TestServer } from '../support/server'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

describeWithRedis('a 503 on a coordination outage frees its Idempotency-Key', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>
  let s: TestServer
  let dev: { id: string; key: string }

  beforeAll(async () => {
    redis = await startRedis()
    s = await startTestServer({ REDIS_URL: redis.url, CONSOLE_TOKEN: 'console-token-for-outage-tests-0002' })
    dev = await s.developer()
    const agent = await s.agent(dev.key, { name: 'Ava', voice: { answersCalls: true } })
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155556102', source: 'rented', agent: agent.id })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155556202' })).status).toBe(201)
  })
  afterAll(async () => {
    await s?.stop()
    await redis?.stop()
  })

  /** The request answers 503 while Redis is paused; once it answers again, the same request answers `status`. */
  async function retriedAfterOutage(send: () => Promise<{ status: number; body: any; headers: Headers }>, status: number) {
    redis.pause(true)
    try {
      const refused = await send()
      expect(refused.status).toBe(503)
      expect(refused.body.error).toContain('nothing was done; retry shortly')
    } finally {
      redis.pause(false)
    }
    await until(
      'ready again',
      async () => (await fetch(`${s.url}/ready`)).status,
      (ready) => ready === 200,
    )
    const retried = await send()
    expect(retried.status).toBe(status)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    // The key now holds that answer.
    const replayed = await send()
    expect(replayed.status).toBe(status)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    expect(replayed.body.id).toBe(retried.body.id)
  }

  test('POST /customers', async () => {
    const body = { name: 'Bright Smile Dental' }
    await retriedAfterOutage(() => s.api('POST', '/customers', { key: dev.key, body, headers: { 'idempotency-key': 'customer-b' } }), 201)
  }, 60_000)

  test('POST /calls', async () => {
    const body = { to: '+14155556202', purpose: 'A quick check' }
    await retriedAfterOutage(() => s.api('POST', '/calls', { key: dev.key, body, headers: { 'idempotency-key': 'call-b' } }), 202)
  }, 60_000)
})
