/**
 * Redis restarted empty (kill -9, no persistence) while the service runs: the booked calls and the
 * scheduled campaign whose time comes after it still start, because the service rebuilds its
 * durable timers from the stored actors once it sees Redis came back without them
 * (actors/timer-rebuild.ts). The manual clock holds the deadlines still while Redis is down.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type RedisServer, startRedis } from '../support/redis'
import { startTestServer, type TestServer } from '../support/server'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

const SEC = 1_000
const CALLS = 8
// The service looks for Redis's mark every second and reconnects within 2 s; 15 s is ample.
const REBUILD_WAIT_MS = 15_000
const NUMBER = '+14155557700'
const people = Array.from({ length: CALLS }, (_, i) => `+141555577${String(10 + i)}`)
const dir = mkdtempSync(join(tmpdir(), 'svc-redis-restart-'))

describeWithRedis('booked work across a Redis restarted empty', () => {
  let redis: RedisServer
  let s: TestServer
  beforeAll(async () => {
    redis = await startRedis()
    s = await startTestServer({ REDIS_URL: redis.url, CONSOLE_TOKEN: 'redis-restart-console-token-0123' }, dir)
  })
  afterAll(async () => {
    await s?.stop()
    await redis?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  test('calls booked for +30 s and a campaign for +32 s start although Redis lost their timers at +25 s', async () => {
    const dev = await s.developer({ plan: 'scale', name: 'Booker' })
    const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: NUMBER, source: 'rented', agent })).status).toBe(201)
    for (const phone of people) {
      expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
      // Busy: each call is over as soon as it is dialled, which is all this test needs to see.
      expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'busy' })).status).toBe(200)
    }
    const t0 = Date.parse((await s.console('GET', '/clock')).body.now)
    const calls: string[] = []
    for (const to of people) {
      const booked = await s.api('POST', '/calls', { key: dev.key, body: { to, purpose: 'Your appointment', scheduledFor: new Date(t0 + 30 * SEC).toISOString() } })
      expect(booked.status).toBe(202)
      calls.push(booked.body.id)
    }
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, {
      agent,
      name: 'Reminders',
      kind: 'voice',
      purpose: 'A reminder',
      recipients: people.slice(0, 2),
      scheduledAt: new Date(t0 + 32 * SEC).toISOString(),
    })
    expect(made.status).toBe(201)
    const campaign = made.body.id

    await s.console('POST', '/clock/advance', { ms: 25 * SEC })
    await redis.crash()
    await redis.restart()
    // Wait (without failing here) for the timers to be back: 8 calls and the campaign.
    const coordination = s.server.services.coordination
    const deadline = Date.now() + REBUILD_WAIT_MS
    while (Date.now() < deadline && (await coordination.pendingTimers().catch(() => 0)) < CALLS + 1) await Bun.sleep(50)

    await s.console('POST', '/clock/advance', { ms: 10 * SEC })
    const statuses = () => Promise.all(calls.map(async (id) => (await s.api('GET', `/calls/${id}`, { key: dev.key })).body.status as string))
    const campaignStatus = async () => (await s.api('GET', `/campaigns/${campaign}`, { key: dev.key })).body.status as string
    await until(
      'every call and the campaign woken',
      async () => [...(await statuses()), await campaignStatus()],
      (all) => !all.includes('scheduled') && !all.includes('draft'),
      { withinMs: 5_000, everyMs: 20 },
    )
    expect((await statuses()).filter((status) => status === 'scheduled')).toEqual([])
    expect(await campaignStatus()).not.toBe('draft')
  }, 40_000)
})
