/**
 * Campaigns of a workspace that cannot pay: the campaign stops and says so. It goes `failed` with
 * the reason as `lastError`, every recipient not reached is `failed` with `not sent: <reason>`
 * (a call refused with 402 keeps the 402's words), nothing is sent or called that cannot be paid,
 * a warn line names the campaign, and the developer is notified.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { capturedLogger } from '../support/log-capture'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

// The USD price list (docs/api/billing.md), stated here: a wrong price there must fail these tests.
const MARKETING = 25_000
const MONTHLY_RENT = 1_500_000
const CREDIT = 5_000_000
const { logger, lines } = capturedLogger('warn')
let s: TestServer

beforeAll(async () => {
  s = await startTestServer({}, undefined, logger)
})
afterAll(() => s?.stop())

/** A Pay-as-you-go workspace renting `rented` numbers (the first the agent's, on `channel`) against its 5 USD credit. */
async function payg(name: string, prefix: string, rented: number, channel: 'voice' | 'chatapp', contacts: string[]) {
  const dev = await s.developer({ plan: 'payg', name })
  const agent = (await s.agent(dev.key, { name, voice: { answersCalls: true } })).id
  for (let i = 0; i < rented; i++)
    expect(
      (await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: `${prefix}${i}`, source: 'rented', channel: i === 0 ? channel : 'voice', agent: i === 0 ? agent : null })).status,
    ).toBe(201)
  expect((await s.api('GET', '/usage', { key: dev.key })).body.wallet.availableMicro).toBe(CREDIT - rented * MONTHLY_RENT)
  if (channel === 'chatapp') expect((await s.console('POST', `/workspaces/${dev.id}/templates`, { name: 'promo', language: 'en', category: 'marketing', body: 'New prices' })).status).toBe(201)
  for (const phone of contacts) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  return { dev, agent }
}

async function run(dev: { id: string; key: string }, body: Record<string, unknown>) {
  const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, { name: 'Money', ...body })
  expect(made.status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${made.body.id}/start`)).status).toBe(200)
  return (
    await until(
      'the campaign ends',
      () => s.api('GET', `/campaigns/${made.body.id}`, { key: dev.key }),
      (r) => ['sent', 'failed'].includes(r.body.status),
      15_000,
    )
  ).body
}

const rows = async (campaignId: string) => (await (await s.server.services.store.collection<any>({ name: 'campaign_recipients', indexes: [] })).find({ campaignId })) as any[]
const stopLines = (campaign: string) => lines.filter((l) => l.campaign === campaign && l.msg === 'campaign stopped: the account cannot pay')
const notices = async (ws: string) => (await s.console('GET', `/workspaces/${ws}/notifications`)).body.items.filter((n: any) => n.kind === 'campaign.failed')
const phones = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`)

test('a broadcast with nothing available fails at its start, saying why, and sends nothing', async () => {
  const to = phones('+141555590', 3)
  const { dev, agent } = await payg('Broke broadcast', '+1415555900', 4, 'chatapp', to)
  const done = await run(dev, { agent, kind: 'chatapp', template: 'promo', recipients: to })
  const why = `the balance cannot pay for a marketing message: ${CREDIT - 4 * MONTHLY_RENT} micro-units available, one costs ${MARKETING}; top up the wallet`
  expect(done).toMatchObject({ status: 'failed', lastError: why, counts: { recipients: 3, sent: 0, failed: 3 } })
  expect((await rows(done.id)).map((r) => r.error)).toEqual(Array(3).fill(`not sent: ${why}`))
  expect(s.server.services.of(messagingFeature).sandbox.sent.filter((m) => to.includes(m.to))).toEqual([])
  expect(stopLines(done.id)).toEqual([expect.objectContaining({ level: 40, workspace: dev.id, reason: why })])
  expect((await notices(dev.id))[0].body).toContain(why)
})

test('a broadcast sends what the balance pays for, then stops: the rest not sent, each saying why', async () => {
  // Three numbers' rent leaves 0.50 USD: twenty marketing messages.
  const to = phones('+141555591', 25)
  const { dev, agent } = await payg('Short broadcast', '+1415555910', 3, 'chatapp', to)
  const done = await run(dev, { agent, kind: 'chatapp', template: 'promo', recipients: to })
  expect(done).toMatchObject({ status: 'failed', counts: { recipients: 25, sent: 20, failed: 5 } })
  expect(done.lastError).toStartWith('the balance cannot pay for a marketing message: 0 micro-units available')
  const unsent = (await rows(done.id)).filter((r) => r.status === 'failed')
  for (const r of unsent) expect(r.error).toStartWith('not sent: the balance cannot pay for a marketing message')
  expect(s.server.services.of(messagingFeature).sandbox.sent.filter((m) => to.includes(m.to))).toHaveLength(20)
  expect((await s.api('GET', '/usage', { key: dev.key })).body.wallet.availableMicro).toBe(0)
  expect(stopLines(done.id)).toHaveLength(1)
})

test('a calling campaign the balance cannot pay a minute of fails with the 402 as lastError; no call rings', async () => {
  const to = phones('+141555592', 3)
  const { dev, agent } = await payg('Broke caller', '+1415555920', 4, 'voice', to)
  const done = await run(dev, { agent, kind: 'voice', purpose: 'Your order is ready', recipients: to })
  expect(done).toMatchObject({ status: 'failed', counts: { recipients: 3, sent: 0, failed: 3 } })
  expect(done.lastError).toStartWith('the balance cannot cover a call: -1000000 micro-units available')
  for (const r of await rows(done.id)) expect(r.error).toContain('the balance cannot cover a call')
  expect((await s.api('GET', '/calls', { key: dev.key })).body.items.filter((c: any) => c.reference === done.id && c.status !== 'failed')).toEqual([])
  expect(stopLines(done.id)).toHaveLength(1)
  expect((await notices(dev.id))[0].body).toContain('the balance cannot cover a call')
})
