/**
 * Redis paused (SIGSTOP: the socket stays open, nothing answers) and then killed, under the real
 * service in Redis mode: `/health` stays liveness (200), `/ready` answers 503 naming coordination,
 * and requests that need Redis (placing a call, a web-chat message) answer 503 with Retry-After
 * instead of hanging; once Redis answers again, so does everything else. A real redis-server.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startRedis } from '../support/redis'
import { startTestServer, type TestServer } from '../support/server'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

// A request that has not answered in this long is hanging: the bound it meets is 5 s
// (COMMAND_TIMEOUT_MS); before it, a call placed on a paused Redis waited for minutes.
const HANGING_MS = 20_000
// Stopping with Redis gone takes a second or two here (once Redis has been gone for the bound,
// operations fail at once); before, it never ended. A wide margin for a loaded runner.
const STOP_MS = 60_000

describeWithRedis('Redis out of service', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>
  let s: TestServer
  let dev: { id: string; key: string }
  let webKey: string
  let session: string

  beforeAll(async () => {
    redis = await startRedis()
    s = await startTestServer({ REDIS_URL: redis.url, CONSOLE_TOKEN: 'console-token-for-outage-tests-0001' })
    dev = await s.developer()
    const agent = await s.agent(dev.key, { name: 'Ava', voice: { answersCalls: true } })
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155556101', source: 'rented', agent: agent.id })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155556201' })).status).toBe(201)
    webKey = agent.webKey
    session = ((await (await web('sessions', {})).json()) as { session: string }).session
  })
  let stopped = false
  afterAll(async () => {
    if (!stopped) await s?.stop()
    await redis?.stop()
  })

  const web = (path: string, body: unknown) =>
    fetch(`${s.url}/api/v1/web/${webKey}/${path}`, {
      method: 'POST',
      headers: { origin: 'http://shop.example', 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(HANGING_MS),
    })
  const ready = async () => {
    const res = await fetch(`${s.url}/ready`, { signal: AbortSignal.timeout(HANGING_MS) })
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any }
  }
  const placeCall = () => s.api('POST', '/calls', { key: dev.key, body: { to: '+14155556201', purpose: 'A quick check' }, headers: {} })

  /** The outage answers every request that needs Redis gets: 503, Retry-After, the cause named. */
  async function expectRefusals() {
    const health = await fetch(`${s.url}/health`)
    expect(health.status).toBe(200)
    const r = await ready()
    expect(r.status).toBe(503)
    expect(r.retryAfter).toBe('5')
    expect(r.body).toMatchObject({ ok: false, status: 'unavailable', store: 'ok', coordination: 'unavailable' })
    expect(r.body.cause).toContain('coordination (redis)')
    const call = await Promise.race([placeCall(), Bun.sleep(HANGING_MS).then(() => null)])
    expect(call?.status).toBe(503)
    expect(call?.headers.get('retry-after')).toBe('5')
    expect(call?.body.error).toContain('coordination is unavailable')
    const chat = await web('messages', { session, message: 'Are you open today?' })
    expect(chat.status).toBe(503)
    expect(chat.headers.get('retry-after')).toBe('5')
    expect(((await chat.json()) as { error: string }).error).toContain('coordination is unavailable')
  }

  test('ready while Redis answers', async () => {
    expect(await ready()).toMatchObject({ status: 200, body: { ok: true, store: 'ok', coordination: 'ok' } })
  })

  test('paused: 503 with Retry-After instead of a hang; all well again once it resumes', async () => {
    redis.pause(true)
    try {
      await expectRefusals()
    } finally {
      redis.pause(false)
    }
    await until(
      'ready again',
      async () => (await ready()).status,
      (status) => status === 200,
    )
    expect((await placeCall()).status).toBe(202)
  }, 60_000)

  test('killed: the same refusals, and the service still stops', async () => {
    await redis.crash()
    await expectRefusals()
    // Shutdown meets the same bound: the actors' lease releases and the client's close give up.
    stopped = await Promise.race([s.stop().then(() => true), Bun.sleep(STOP_MS).then(() => false)])
    expect(stopped).toBe(true)
  }, 120_000)
})
