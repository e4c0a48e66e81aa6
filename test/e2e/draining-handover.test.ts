/**
 * SIGTERM hands durable work to another instance at once. Two real services in child processes on
 * one Redis and one store (SQLite in shared locking stands in for MongoDB); A sends a 300-recipient
 * broadcast to the WhatsApp fake (in this process, so it counts every message either instance
 * sends). SIGTERM on A mid-broadcast: A stops before its next recipient, lets the sends in flight
 * finish, releases the campaign and tells B, which carries on at once, not after A's lease lapses
 * (15 s) and B's sweep for orphaned work comes round (30 s). A exits 0; nobody gets the message
 * twice and, the hand-over being orderly, nobody is lost as "interrupted" either.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { startWhatsAppFake, whatsAppEnv } from '../fakes/whatsapp'
import { childClient, freePort, startChildService } from '../support/child-service'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

const TOKEN = 'draining-handover-console-token-0123456789'
const GRAPH_TOKEN = 'EAAG-draining-handover'
const NUMBER = '+14155550890'
// Well under a lease (15 s) and far under an orphan sweep (30 s): only the hand-over is this quick.
const TAKEN_OVER_WITHIN_MS = 5_000

describeWithRedis('draining across instances', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-draining-handover-'))
  const fake = startWhatsAppFake(GRAPH_TOKEN)
  const children: Subprocess[] = []
  let redis: RedisServer | null = null

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    fake.stop()
    await redis?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('SIGTERM on A mid-broadcast: B carries the campaign on at once; nobody twice, nobody lost', async () => {
    redis = await startRedis()
    // 50 sends a second: the 300 take about 6 s, so the signal lands mid-broadcast.
    const env = {
      DATA_DIR: dataDir,
      REDIS_URL: redis.url,
      SQLITE_LOCKING: 'shared',
      CONSOLE_TOKEN: TOKEN,
      LOG_LEVEL: 'silent',
      CAMPAIGN_SEND_RATE: '50',
      ...whatsAppEnv(fake, { token: GRAPH_TOKEN, appSecret: 'draining-handover-secret', verifyToken: 'draining-handover-verify', phoneNumberIds: { [NUMBER]: '106540352242998' } }),
    }
    const [portA, portB] = [await freePort(), await freePort()]
    const a = await startChildService(portA, env)
    children.push(a)
    const b = await startChildService(portB, env)
    children.push(b)
    const onA = childClient(portA)
    const onB = childClient(portB)

    const dev = (await onA('POST', '/console/workspaces', TOKEN, { name: 'Handover', plan: 'scale' })).body
    const agent = (await onA('POST', '/api/v1/agents', dev.key, { name: 'Broadcaster' })).body.id
    expect((await onA('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
    expect((await onA('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: NUMBER, source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
    expect((await onA('POST', `/console/workspaces/${dev.id}/templates`, TOKEN, { name: 'promo', language: 'en', category: 'marketing', body: 'Hi {{1}}' })).status).toBe(201)
    const people = Array.from({ length: 300 }, (_, i) => `+1415558${String(1000 + i)}`)
    for (const phone of people) expect((await onA('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone, name: `P${phone.slice(-4)}` })).status).toBe(201)
    const id = (await onA('POST', `/console/workspaces/${dev.id}/campaigns`, TOKEN, { agent, name: 'Handover', kind: 'chatapp', template: 'promo', recipients: people })).body.id
    // Started on A: A holds the campaign and sends.
    expect((await onA('POST', `/console/workspaces/${dev.id}/campaigns/${id}/start`, TOKEN)).body.status).toBe('sending')
    await until(
      'A to send 60 messages',
      () => fake.sent.length,
      (n) => n >= 60,
      { withinMs: 10_000 },
    )

    const signalledAt = Date.now()
    a.kill('SIGTERM')
    expect(await a.exited).toBe(0)
    const atExit = fake.sent.length
    expect(atExit).toBeLessThan(300)
    // B sends the rest, starting at once.
    await until(
      'B to send again',
      () => fake.sent.length,
      (n) => n > atExit || n === 300,
      { withinMs: 5_000 },
    )
    const resumedAfterMs = Date.now() - signalledAt
    expect(resumedAfterMs).toBeLessThan(TAKEN_OVER_WITHIN_MS)

    const done = await until(
      'the campaign to end on B',
      async () => (await onB('GET', `/api/v1/campaigns/${id}`, dev.key)).body,
      (c) => c.status !== 'sending',
      { withinMs: 20_000, everyMs: 20 },
    )
    expect(done.status).toBe('sent')
    const perPhone = new Map<string, number>()
    for (const m of fake.sent) perPhone.set(m.body.to, (perPhone.get(m.body.to) ?? 0) + 1)
    expect([...perPhone.values()].filter((n) => n > 1)).toEqual([])
    expect(done.counts).toMatchObject({ recipients: 300, sent: 300, failed: 0, skipped: 0 })
    expect(fake.sent).toHaveLength(300)
  }, 60_000)
})
