/**
 * A broadcast across kill -9: the real service in a child process sends a 300-recipient broadcast
 * to the WhatsApp Cloud API (the local Graph fake, here in the test process, so it outlives the
 * service and counts every message it took), is killed mid-broadcast, restarts on the same
 * DATA_DIR and finishes: nobody gets the template twice, everyone else gets it once, and the counts
 * add up (a recipient caught mid-send is `failed` as interrupted, never sent again).
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { startWhatsAppFake, whatsAppEnv, whatsAppNotification } from '../fakes/whatsapp'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'campaign-crash-console-token-0123456789'
const GRAPH_TOKEN = 'EAAG-campaign-crash'
const APP_SECRET = 'campaign-crash-app-secret'
const NUMBER = '+14155550880'
const dataDir = mkdtempSync(join(tmpdir(), 'svc-campaign-crash-'))
const fake = startWhatsAppFake(GRAPH_TOKEN)
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  fake.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('kill -9 mid-broadcast: after the restart it finishes and sends to nobody twice', async () => {
  const port = await freePort()
  const call = childClient(port)
  // 100 sends a second: the 300 take about 3 s, so the kill lands mid-broadcast.
  const env = {
    DATA_DIR: dataDir,
    SERVICE_CLOCK: 'manual',
    CONSOLE_TOKEN: TOKEN,
    LOG_LEVEL: 'silent',
    CAMPAIGN_SEND_RATE: '100',
    ...whatsAppEnv(fake, { token: GRAPH_TOKEN, appSecret: APP_SECRET, verifyToken: 'campaign-crash-verify', phoneNumberIds: { [NUMBER]: '106540352242999' } }),
  }
  child = await startChildService(port, env)
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Crash broadcast', plan: 'scale' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Broadcaster' })).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200) // only a published agent's campaign starts
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: NUMBER, source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
  expect((await call('POST', `/console/workspaces/${dev.id}/templates`, TOKEN, { name: 'promo', language: 'en', category: 'marketing', body: 'Hi {{1}}' })).status).toBe(201)
  const people = Array.from({ length: 300 }, (_, i) => `+1415559${String(1000 + i)}`)
  for (const phone of people) expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone, name: `P${phone.slice(-4)}` })).status).toBe(201)
  const id = (await call('POST', `/console/workspaces/${dev.id}/campaigns`, TOKEN, { agent, name: 'Crash', kind: 'chatapp', template: 'promo', recipients: people })).body.id
  expect((await call('POST', `/console/workspaces/${dev.id}/campaigns/${id}/start`, TOKEN)).body.status).toBe('sending')
  await until(
    '60 messages sent before the kill',
    () => fake.sent.length,
    (n) => n >= 60,
    { withinMs: 5_000 },
  )
  child.kill('SIGKILL')
  await child.exited
  const atKill = fake.sent.length
  expect(atKill).toBeGreaterThanOrEqual(60)
  expect(atKill).toBeLessThan(300)

  child = await startChildService(port, env)
  const done = await until(
    'the campaign to end after the restart',
    async () => (await call('GET', `/api/v1/campaigns/${id}`, dev.key)).body,
    (c) => c.status !== 'sending',
    { withinMs: 20_000, everyMs: 20 },
  )
  expect(done.status).toBe('sent')
  const perPhone = new Map<string, number>()
  for (const m of fake.sent) perPhone.set(m.body.to, (perPhone.get(m.body.to) ?? 0) + 1)
  // Nobody twice.
  expect([...perPhone.values()].filter((n) => n > 1)).toEqual([])
  // Everyone counted once: sent, or failed as interrupted (caught between claim and the platform's answer).
  expect(done.counts.recipients).toBe(300)
  expect(done.counts.sent + done.counts.failed).toBe(300)
  expect(done.counts.skipped).toBe(0)
  expect(done.counts.failed).toBeLessThanOrEqual(32)
  // Graph took every message counted sent, and at most the interrupted ones besides.
  expect(fake.sent.length).toBeGreaterThanOrEqual(done.counts.sent)
  expect(fake.sent.length).toBeLessThanOrEqual(300)
  // The restart carried on: more messages went out after it.
  expect(fake.sent.length).toBeGreaterThan(atKill)

  // WhatsApp's status webhooks move the counts (the Graph fake's ids are wamid.FAKE1, 2, … in send order).
  const status = whatsAppNotification(APP_SECRET, {
    metadata: { display_phone_number: NUMBER.slice(1), phone_number_id: '106540352242999' },
    statuses: [{ id: 'wamid.FAKE1', status: 'read', timestamp: '1732400005', recipient_id: fake.sent[0]!.body.to }],
  })
  const hooked = await fetch(`http://127.0.0.1:${port}/messaging/whatsapp/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': status.signature },
    body: status.raw,
  })
  expect(hooked.status).toBe(200)
  const read = await until(
    'the read receipt counted',
    async () => (await call('GET', `/api/v1/campaigns/${id}`, dev.key)).body,
    (c) => c.counts.read === 1,
    { withinMs: 4_000, everyMs: 20 },
  )
  expect(read.counts).toMatchObject({ read: 1, sent: done.counts.sent })
}, 60_000)
