/**
 * Broadcasts are metered like every other chat-app message (docs/api/billing.md): each message
 * the platform takes is one ledger record priced by the template's category on a paid plan, and on
 * Free, whose 100 chat-app messages a month are shared by the account, a broadcast stops sending
 * when they are used up (failed, saying so, the rest not sent) and a new one fails at its start
 * saying so.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s?.stop())

const phones = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `+1415${prefix}${String(i).padStart(4, '0')}`)

async function broadcaster(plan: string, number: string, contacts: string[]) {
  const dev = await s.developer({ plan, name: `Broadcast ${plan}` })
  const agent = (await s.agent(dev.key, { name: 'Broadcaster' })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/templates`, { name: 'promo', language: 'en', category: 'marketing', body: 'Hi {{1}}, new prices' })).status).toBe(201)
  for (const phone of contacts) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  const run = async (recipients: string[]) => {
    const id = (await s.console('POST', `/workspaces/${dev.id}/campaigns`, { agent, name: 'Sale', kind: 'chatapp', template: 'promo', recipients })).body.id
    expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/start`)).status).toBe(200)
    return (
      await until(
        `campaign ${id} ends`,
        () => s.api('GET', `/campaigns/${id}`, { key: dev.key }),
        (r) => ['sent', 'failed'].includes(r.body.status),
      )
    ).body
  }
  return { dev, run }
}

const messageRecords = async (workspaceId: string) => {
  const ledger = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
  return (await ledger.find({ workspaceId })).filter((r) => r.kind === 'message')
}

test('on a paid plan each broadcast message is one ledger record priced as a marketing message', async () => {
  const contacts = phones(3, '555')
  const { dev, run } = await broadcaster('scale', '+14155559800', contacts)
  const done = await run(contacts)
  expect(done).toMatchObject({ status: 'sent', counts: { recipients: 3, sent: 3, failed: 0 } })
  const records = await until(
    'metered',
    () => messageRecords(dev.id),
    (r) => r.length === 3,
  )
  for (const r of records) expect(r).toMatchObject({ category: 'marketing', quantity: 1, unitPriceMicro: 25_000, costMicro: 25_000, campaignId: done.id })
})

test("on Free the month's 100 messages stop a broadcast; the next one fails at its start", async () => {
  const contacts = phones(105, '556')
  const { dev, run } = await broadcaster('free', '+14155559801', contacts)
  const first = await run(contacts)
  expect(first.counts).toMatchObject({ recipients: 105, sent: 100, failed: 5 })
  // It stops there and says so: failed, not sent, with the reason as lastError.
  expect(first).toMatchObject({ status: 'failed', lastError: "the plan's chat-app messages for this month are used up" })
  expect(await messageRecords(dev.id)).toHaveLength(100)
  const rows = await s.server.services.store.collection<any>({ name: 'campaign_recipients', indexes: [] })
  const unsent = (await rows.find({ campaignId: first.id })).filter((r) => r.status === 'failed')
  expect(unsent.map((r) => r.error)).toEqual(Array(5).fill("not sent: the plan's chat-app messages for this month are used up"))

  const second = await run(contacts.slice(0, 2))
  expect(second).toMatchObject({ status: 'failed', counts: { sent: 0, failed: 2 } })
  expect(second.lastError).toContain('chat-app messages for this month are used up')
})
