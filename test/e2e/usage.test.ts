/**
 * Money end to end on the manual clock: a month of replies (test chat, a customer's), a call and a
 * rented number add up, to the micro-unit, in the ledger, GET /usage, the customer's
 * spendThisMonthMicro and the call totals' debitMicro; the Free allowance stops replies (test chat
 * 402, a live email handed to a person) and the next month resumes them; a metered wallet that
 * cannot pay stops replies and refuses calls until a top-up, with one low-balance notice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { usageFeature } from '../../src/features/usage'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
// The published USD price list (docs/api/billing.md), in micro-units, stated here rather than read
// from src/catalog/prices.ts: a wrong price there must fail these tests.
const REPLY = 10_000
const STANDARD_MINUTE = 60_000
const MONTHLY_RENT = 1_500_000
let s: TestServer

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const now = async () => Date.parse((await s.console('GET', '/clock')).body.now)
/** Moves the clock to 01:00 UTC on the 1st of the next month. */
async function toNextMonth(): Promise<void> {
  const d = new Date(await now())
  const target = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1, 1)
  await advance(target - d.getTime())
}
const ledger = () => s.server.services.of(usageFeature).ledger.records
const chat = async (key: string, agent: string, message: string, workspace?: string) => {
  await advance(2 * SEC) // a person's typing pace (test chat refuses faster)
  return s.api('POST', `/agents/${agent}/test-chat`, { key, workspace, body: { message } })
}

beforeAll(async () => {
  s = await startTestServer()
  await toNextMonth()
})
afterAll(() => s?.stop())

describe('a month of replies and calls adds up to the ledger', () => {
  test('usage, wallet, customer spend and call debit all read the same records', async () => {
    const dev = await s.developer({ plan: 'payg', name: 'Metered' })
    const top = await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 20_000_000 })
    expect(top.status).toBe(200)
    expect(top.body).toMatchObject({ balanceMicro: 25_000_000, creditMicro: 5_000_000, heldMicro: 0 })
    const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557000', source: 'rented', agent })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557001' })).status).toBe(201)
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })).body.id
    const helper = (await s.agent(dev.key, { name: 'Helper' }, customer)).id

    for (let i = 0; i < 3; i++) expect((await chat(dev.key, agent, `Hello ${i}`)).status).toBe(200)
    await advance(86_400 * SEC) // the next day
    for (let i = 0; i < 2; i++) expect((await chat(dev.key, helper, `Hi ${i}`, customer)).status).toBe(200)

    // A call answered and hung up after 61 s: two started minutes at the standard tier.
    await s.console('PUT', '/sandbox/phones/%2B14155557001', { pickup: 'answer', ringMs: 0, hangupAfterMs: 61 * SEC })
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557001', purpose: 'Confirm tomorrow' } })
    expect(placed.status).toBe(202)
    await until(
      'connected',
      () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
      (r) => r.body.status === 'connected',
    )
    await advance(62 * SEC)
    await until(
      'analysed',
      () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
      (r) => r.body.analysedAt !== null,
    )

    const usage = await s.api('GET', '/usage?days=3', { key: dev.key })
    expect(usage.status).toBe(200)
    const records = await ledger().find({ developerId: dev.id })
    const spend = records.reduce((sum, r) => sum + r.costMicro, 0)
    // 5 replies, 2 standard minutes (nothing to analyse: no summary, no fields) and a month's rent,
    // all of it from the 5 USD plan credit.
    expect(spend).toBe(5 * REPLY + 2 * STANDARD_MINUTE + MONTHLY_RENT) // 1,670,000
    const replies = records.filter((r) => r.kind === 'reply')
    expect(replies).toHaveLength(5)
    expect(replies.every((r) => r.costMicro === REPLY)).toBe(true)
    const minutes = records.filter((r) => r.kind === 'call_minute')
    expect(minutes).toMatchObject([{ quantity: 2, unitPriceMicro: STANDARD_MINUTE, costMicro: 120_000, workspaceId: dev.id }])
    expect(records.filter((r) => r.kind === 'phone_rent')).toMatchObject([{ costMicro: MONTHLY_RENT }])
    expect(usage.body).toMatchObject({
      plan: 'payg',
      currency: 'USD',
      replies: { used: 5, included: null, metered: true, stopped: false },
      // Plan credit first, then the top-up: balance = top-up + credit − spend within the month.
      wallet: { balanceMicro: 25_000_000 - spend, creditMicro: 5_000_000 - spend, heldMicro: 0, availableMicro: 25_000_000 - spend },
    })
    expect(usage.body.daily.map((d: any) => d.replies)).toEqual([0, 3, 2])
    const month = new Date(await now()).toISOString().slice(0, 7)
    expect(usage.body.period.start).toBe(`${month}-01T00:00:00.000Z`)

    // The customer: its own spend (two replies), billed to the developer, no wallet.
    const cust = await s.api('GET', `/customers/${customer}`, { key: dev.key })
    expect(cust.body.spendThisMonthMicro).toBe(20_000) // two replies
    expect(cust.body.spendThisMonthMicro).toBe(records.filter((r) => r.workspaceId === customer).reduce((sum, r) => sum + r.costMicro, 0))
    const inside = await s.api('GET', '/usage', { key: dev.key, workspace: customer })
    expect(inside.body).toMatchObject({ billedTo: 'developer', replies: { used: 5 } })
    expect(inside.body).not.toHaveProperty('wallet')
    expect(inside.body.daily.reduce((n: number, d: any) => n + d.replies, 0)).toBe(2)

    // Call totals' debit is the ledger's minutes and analysis passes of the developer's calls.
    const totals = await s.api('GET', '/calls/summary?days=7', { key: dev.key })
    const callCost = records.filter((r) => r.workspaceId === dev.id && (r.kind === 'call_minute' || r.kind === 'analysis')).reduce((sum, r) => sum + r.costMicro, 0)
    expect(totals.body.debitMicro).toBe(callCost)
    expect(callCost).toBe(120_000) // two standard minutes, no analysis pass

    // The next month: a new period, the allowance count starts again, the credit is back and the rent renews.
    await toNextMonth()
    const next = await s.api('GET', '/usage', { key: dev.key })
    expect(next.body.replies.used).toBe(0)
    expect(next.body.period.start > usage.body.period.start).toBe(true)
    expect(next.body.wallet.creditMicro).toBe(5_000_000 - MONTHLY_RENT) // the renewal paid from the new credit
    const after = await ledger().find({ developerId: dev.id })
    const spentBefore = spend
    const spentNow = after.reduce((sum, r) => sum + r.costMicro, 0) - spentBefore
    expect(spentNow).toBe(MONTHLY_RENT) // the number's second month
    // Last month's unspent credit expired; the top-up stays whole (last month's spend fit the credit).
    expect(next.body.wallet.balanceMicro).toBe(20_000_000 + 5_000_000 - spentNow)
  })

  test('days out of 1–90 is 400 naming days', async () => {
    const dev = await s.developer()
    for (const days of ['0', '91', 'x']) {
      const r = await s.api('GET', `/usage?days=${days}`, { key: dev.key })
      expect(r.status).toBe(400)
      expect(r.body.error).toContain('days')
    }
  })
})

describe('the Free allowance', () => {
  test('stops replies when used up (test chat 402, live email handed to a person) and the next month resumes them', async () => {
    const dev = await s.developer({ plan: 'free', name: 'Free' })
    const agent = (await s.agent(dev.key, { name: 'Mail agent' })).id
    for (let i = 0; i < 100; i++) expect((await chat(dev.key, agent, `Question ${i}`)).status).toBe(200)
    const usage = await s.api('GET', '/usage', { key: dev.key })
    expect(usage.body).toMatchObject({ plan: 'free', replies: { used: 100, included: 100, metered: false, stopped: true }, wallet: null })

    const conversations = (await s.api('GET', '/conversations?limit=100', { key: dev.key })).body.items.length
    const refused = await chat(dev.key, agent, 'One more?')
    expect(refused.status).toBe(402)
    expect(refused.body.error).toContain('replies are stopped')
    expect((await s.api('GET', '/conversations?limit=100', { key: dev.key })).body.items.length).toBe(conversations)

    const mail = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'email', from: 'late@example.com', text: 'Are you open?' })
    expect(mail.status).toBe(201)
    await s.server.services.of(messagingFeature).emailInbound.settled()
    const outbox = (await s.console('GET', '/outbox?limit=100')).body.items.filter((m: any) => m.to === 'late@example.com')
    expect(outbox).toHaveLength(0)
    const conv = await s.server.services.store.collection<any>({ name: 'conversations', indexes: [] })
    expect((await conv.get(mail.body.conversationId))?.status).toBe('escalated')
    expect(await ledger().count({ developerId: dev.id, kind: 'reply' })).toBe(100)

    // A plan change resumes them (Pro includes 5,000); back on Free they stop again.
    expect((await s.console('PATCH', `/workspaces/${dev.id}`, { plan: 'pro' })).status).toBe(200)
    expect((await chat(dev.key, agent, 'Upgraded?')).status).toBe(200)
    expect((await s.api('GET', '/usage', { key: dev.key })).body.replies).toEqual({ used: 101, included: 5_000, metered: false, stopped: false })
    await s.console('PATCH', `/workspaces/${dev.id}`, { plan: 'free' })
    expect((await chat(dev.key, agent, 'Downgraded?')).status).toBe(402)

    await toNextMonth()
    const resumed = await chat(dev.key, agent, 'And now?')
    expect(resumed.status).toBe(200)
    expect((await s.api('GET', '/usage', { key: dev.key })).body.replies).toEqual({ used: 1, included: 100, metered: false, stopped: false })
  })
})

describe('Free voice minutes', () => {
  test('calls are refused (402) once the 30 included minutes are used, shared with customers; the next month they ring again', async () => {
    const dev = await s.developer({ plan: 'free', name: 'Free calls' })
    const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
    await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557300', source: 'rented', agent })
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557301' })
    await s.console('PUT', '/sandbox/phones/%2B14155557301', { pickup: 'no_answer', ringMs: 1_000 })
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Shares' } })).body.id
    // 29 minutes used by the customer, then one more: the allowance is the account's.
    const { meter } = s.server.services.of(usageFeature)
    await meter.charge({ id: 'use_free_min_1', workspaceId: customer, act: { kind: 'call_minute', seconds: 29 * 60, tier: 'standard' } })
    const ok = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557301', purpose: 'Still free' } })
    expect(ok.status).toBe(202)
    await advance(2_000)
    await meter.charge({ id: 'use_free_min_2', workspaceId: dev.id, act: { kind: 'call_minute', seconds: 45, tier: 'premium' } })
    const refused = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557301', purpose: 'Over' } })
    expect(refused.status).toBe(402)
    expect(refused.body.error).toContain('30 voice minutes')
    expect(await ledger().sum('costMicro', { developerId: dev.id })).toBe(0) // Free records everything at 0
    await toNextMonth()
    expect((await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557301', purpose: 'New month' } })).status).toBe(202)
    await advance(2_000)
  })
})

describe('the wallet', () => {
  test('a metered wallet that cannot pay stops replies and refuses calls; one low-balance notice; a top-up resumes', async () => {
    const dev = await s.developer({ plan: 'payg', name: 'Broke' })
    const agent = (await s.agent(dev.key, { name: 'Caller', voice: { answersCalls: true } })).id
    // Four rented numbers: 6 USD of rent against the 5 USD plan credit.
    for (let i = 0; i < 4; i++)
      expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: `+1415555710${i}`, source: 'rented', agent: i === 0 ? agent : null })).status).toBe(201)
    await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557199' })
    const usage = await s.api('GET', '/usage', { key: dev.key })
    expect(usage.body.wallet).toMatchObject({ balanceMicro: 5_000_000 - 4 * MONTHLY_RENT, availableMicro: -1_000_000 })
    expect(usage.body.replies.stopped).toBe(true)
    expect((await chat(dev.key, agent, 'Hello?')).status).toBe(402)
    const call = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557199', purpose: 'Hello' } })
    expect(call.status).toBe(402)
    expect(call.body.error).toContain('balance')

    const notices = async () => (await s.console('GET', `/workspaces/${dev.id}/notifications`)).body.items.filter((n: any) => n.kind === 'low_balance')
    expect(await notices()).toHaveLength(1)
    expect((await notices())[0].title).toBe('Your balance has run out')
    await s.api('GET', '/usage', { key: dev.key })
    expect(await notices()).toHaveLength(1) // once per crossing, not per look

    const top = await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro: 10_000_000 })
    expect(top.body.availableMicro).toBe(9_000_000)
    expect((await chat(dev.key, agent, 'Hello again?')).status).toBe(200)
    // Spending below 2 USD later would be a new crossing of a lower threshold than the top-up left.
    expect(await notices()).toHaveLength(1)
  })

  test('rent renewing within 7 days is held', async () => {
    const dev = await s.developer({ plan: 'pro', name: 'Held' })
    await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557200', source: 'rented' })
    expect((await s.api('GET', '/usage', { key: dev.key })).body.wallet.heldMicro).toBe(0)
    await advance(25 * 86_400 * SEC)
    const w = (await s.api('GET', '/usage', { key: dev.key })).body.wallet
    expect(w.heldMicro).toBe(MONTHLY_RENT)
    expect(w.availableMicro).toBe(w.balanceMicro - MONTHLY_RENT)
  })

  test('console top-up: a customer or a Free workspace has no wallet (409); the amount is checked (400)', async () => {
    const free = await s.developer({ plan: 'free' })
    expect((await s.console('POST', `/workspaces/${free.id}/wallet`, { creditMicro: 1 })).status).toBe(409)
    const dev = await s.developer({ plan: 'payg' })
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'C' } })).body.id
    expect((await s.console('POST', `/workspaces/${customer}/wallet`, { creditMicro: 1 })).status).toBe(409)
    for (const creditMicro of [0, -5, 1.5, 1e13]) {
      const r = await s.console('POST', `/workspaces/${dev.id}/wallet`, { creditMicro })
      expect(r.status).toBe(400)
      expect(r.body.error).toContain('creditMicro')
    }
    expect((await s.console('POST', '/workspaces/ws_nope/wallet', { creditMicro: 1 })).status).toBe(404)
  })
})
