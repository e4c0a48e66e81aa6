/**
 * GET /chatapp/summary counts a broadcast's messages (they live on the campaign's recipient rows,
 * not in conversations) beside the conversations' own, each message once: in `sent` and by how far
 * it got, in the series (which add up to `sent`), failures by the platform's code, and priced by the template's category.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const NUMBER = '+14155553400'
const ok = ['+14155553401', '+14155553402', '+14155553403', '+14155553404']
const refused = '+14155553405'
let s: TestServer
let dev: { id: string; key: string }

const sandbox = () => s.server.services.of(messagingFeature).sandbox
const sentTo = (phone: string) => sandbox().sent.filter((m) => m.to === phone)
const summary = async () => {
  const r = await s.api('GET', '/chatapp/summary?days=1', { key: dev.key })
  expect(r.status).toBe(200)
  return r.body
}

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale', name: 'Broadcaster' })
  const agent = await s.agent(dev.key, { name: 'Broadcaster' })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: NUMBER, source: 'rented', channel: 'chatapp', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/templates`, { name: 'promo', language: 'en', category: 'marketing', body: 'Spring prices are here' })).status).toBe(201)
  for (const phone of [...ok, refused]) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  sandbox().refuse.add(refused)
})
afterAll(() => s?.stop())

test('a broadcast counts once per message: receipts, a refusal and a reply, beside a conversation', async () => {
  const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, {
    agent: (await s.api('GET', '/agents', { key: dev.key })).body.items[0].id,
    name: 'Spring',
    kind: 'chatapp',
    template: 'promo',
    recipients: [...ok, refused],
  })
  expect(made.status).toBe(201)
  const id = made.body.id
  expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/start`)).body.status).toBe('sending')
  await until(
    'the broadcast is sent',
    () => s.api('GET', `/campaigns/${id}`, { key: dev.key }),
    (r) => r.body.status === 'sent' && r.body.counts.delivered === 4,
    10_000,
  )

  // The platform's later receipts: one read, one failed after delivery (its own code).
  await sandbox().report({ platformMessageId: sentTo(ok[0]!)[0]!.platformMessageId, status: 'read', at: Date.now() })
  await sandbox().report({ platformMessageId: sentTo(ok[1]!)[0]!.platformMessageId, status: 'failed', at: Date.now(), error: { code: '131047', message: 'Re-engagement message' } })
  // A reply: the conversation gets the customer's message and the agent's answer (a free-form `service` message).
  expect((await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: ok[2], to: NUMBER, text: 'Tell me more' })).status).toBe(201)
  await s.server.services.of(messagingFeature).inbound.settled()
  await until(
    'receipts and the reply',
    () => s.api('GET', `/campaigns/${id}`, { key: dev.key }),
    (r) => r.body.counts.read === 2 && r.body.counts.replied === 1 && r.body.counts.failed === 2,
  )
  const messages = await s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
  await until(
    'the answer delivered',
    async () => (await messages.find({ workspaceId: dev.id, author: 'agent' })).filter((m: any) => m.delivery?.status === 'delivered').length,
    (n) => n === 1,
  )

  const r = await summary()
  // Broadcast: ok[3] delivered; ok[0] read; ok[2] replied (read); ok[1] failed 131047; the refused one failed 131026.
  // Conversation: the customer's message received, the agent's answer delivered.
  // Sent: all six; delivered: the four that reached a phone (the two read among them); failed: two.
  expect(r).toMatchObject({ sent: 6, delivered: 4, read: 2, failed: 2, noReceipt: 0, received: 1 })
  expect(r.errors).toHaveLength(2)
  expect(r.errors).toEqual(
    expect.arrayContaining([
      { error: '131026', n: 1 },
      { error: '131047', n: 1 },
    ]),
  )
  expect(r.series.reduce((n: number, b: any) => n + b.sent, 0)).toBe(r.sent)
  expect(r.series.reduce((n: number, b: any) => n + b.received, 0)).toBe(1)
  // Scale on USD: marketing 25,000 micro a message (src/catalog/prices.ts), a free-form reply 5,000.
  expect(r.cost.complete).toBe(true)
  expect(r.cost.byCategory).toEqual(
    expect.arrayContaining([
      { category: 'marketing', messages: 5, costMicro: 125_000 },
      { category: 'service', messages: 1, costMicro: 5_000 },
    ]),
  )
  expect(r.cost.byCategory).toHaveLength(2)
  expect(r.cost.totalMicro).toBe(130_000)

  // Counted in the window they were sent in: a window of earlier days has none of them.
  const today = r.from as string
  const before = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10)
  const earlier = (await s.api('GET', `/chatapp/summary?from=${before}&to=${before}`, { key: dev.key })).body
  expect(earlier).toMatchObject({ sent: 0, delivered: 0, read: 0, failed: 0, received: 0 })
})

test('a plain broadcast: sent counts every message, delivered and read are parts of it, the series add up to it', async () => {
  const w = await s.developer({ plan: 'scale', name: 'Three' })
  const agent = await s.agent(w.key, { name: 'Three' })
  expect((await s.console('POST', `/workspaces/${w.id}/phone-numbers`, { number: '+14155553410', source: 'rented', channel: 'chatapp', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${w.id}/templates`, { name: 'hello', language: 'en', category: 'utility', body: 'Your order shipped' })).status).toBe(201)
  const to = ['+14155553411', '+14155553412', '+14155553413']
  for (const phone of to) expect((await s.console('POST', `/workspaces/${w.id}/contacts`, { phone })).status).toBe(201)
  const id = (await s.console('POST', `/workspaces/${w.id}/campaigns`, { agent: agent.id, name: 'Shipped', kind: 'chatapp', template: 'hello', recipients: to })).body.id
  expect((await s.console('POST', `/workspaces/${w.id}/campaigns/${id}/start`)).status).toBe(200)
  await until(
    'delivered',
    () => s.api('GET', `/campaigns/${id}`, { key: w.key }),
    (r) => r.body.status === 'sent' && r.body.counts.delivered === 3,
    10_000,
  )
  await sandbox().report({ platformMessageId: sentTo(to[0]!)[0]!.platformMessageId, status: 'read', at: Date.now() })
  await until(
    'read',
    () => s.api('GET', `/campaigns/${id}`, { key: w.key }),
    (r) => r.body.counts.read === 1,
  )
  const r = (await s.api('GET', '/chatapp/summary?days=1', { key: w.key })).body
  expect(r).toMatchObject({ sent: 3, delivered: 3, read: 1, failed: 0, noReceipt: 0, received: 0 })
  expect(r.series.reduce((n: number, b: any) => n + b.sent, 0)).toBe(3)
})
