/**
 * The template review step in the console, end to end: draft → pending → approved → paused →
 * approved, pending → rejected → pending; every other move 409 naming the status; `language`
 * choosing among a name's languages; a rejection (and a pause) notified to the developer, with the
 * customer's name in the title inside a customer workspace; what a reply may send follows.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }

const create = (body: Record<string, unknown>, ws = dev.id) =>
  s.console('POST', `/workspaces/${ws}/templates`, { language: 'en', category: 'utility', body: 'Your order {{1}} is on its way', status: 'draft', ...body })
const review = (name: string, body: Record<string, unknown>, ws = dev.id) => s.console('PATCH', `/workspaces/${ws}/templates/${name}`, body)
const notices = async (ws = dev.id) => (await s.console('GET', `/workspaces/${ws}/notifications?limit=100`)).body.items as any[]

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale', name: 'Reviews' })
})
afterAll(() => s?.stop())

describe('review moves', () => {
  test('draft → pending → approved → paused → approved; the answer is the template', async () => {
    expect((await create({ name: 'shipped' })).status).toBe(201)
    for (const status of ['pending', 'approved', 'paused', 'approved']) {
      const r = await review('shipped', { status })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ name: 'shipped', language: 'en', status, reason: null })
    }
    const listed = (await s.api('GET', '/templates?status=approved', { key: dev.key })).body.items
    expect(listed.map((t: any) => t.name)).toContain('shipped')
  })

  test('moves that do not apply are 409 naming the current status; the template is unchanged', async () => {
    await create({ name: 'refused_moves' })
    const cases: [string, string][] = [
      ['draft', 'approved'],
      ['draft', 'rejected'],
      ['draft', 'paused'],
    ]
    for (const [from, to] of cases) {
      const r = await review('refused_moves', { status: to })
      expect(r.status).toBe(409)
      expect(r.body.state).toBe(from)
      expect(r.body.error).toContain(`is ${from}`)
    }
    await review('refused_moves', { status: 'pending' })
    for (const to of ['pending', 'paused']) expect((await review('refused_moves', { status: to })).body.state).toBe('pending')
    await review('refused_moves', { status: 'approved' })
    for (const to of ['approved', 'pending', 'rejected']) expect((await review('refused_moves', { status: to })).body.state).toBe('approved')
    const after = (await s.api('GET', '/templates', { key: dev.key })).body.items.find((t: any) => t.name === 'refused_moves')
    expect(after.status).toBe('approved')
  })

  test('a wrong body is 400 naming the field; an unknown name is 404', async () => {
    await create({ name: 'checked' })
    expect((await review('checked', { status: 'draft' })).body.error).toStartWith('status')
    const withReason = await review('checked', { status: 'pending', reason: 'looks fine' })
    expect(withReason.status).toBe(400)
    expect(withReason.body.error).toStartWith('reason: ')
    expect((await review('checked', { status: 'pending', reason: 'x'.repeat(1_001) })).status).toBe(400)
    expect((await review('nope', { status: 'pending' })).status).toBe(404)
    expect((await review('checked', { status: 'pending', language: 'fr' })).status).toBe(404)
  })

  test('language picks one of a name’s languages; without it, a name in several is 400 naming language', async () => {
    await create({ name: 'welcome', language: 'en' })
    await create({ name: 'welcome', language: 'hi', body: 'Swagat {{1}}' })
    const ambiguous = await review('welcome', { status: 'pending' })
    expect(ambiguous.status).toBe(400)
    expect(ambiguous.body.error).toStartWith('language: ')
    expect(ambiguous.body.error).toContain('en, hi')
    const hi = await review('welcome', { status: 'pending', language: 'hi' })
    expect(hi.status).toBe(200)
    expect(hi.body).toMatchObject({ language: 'hi', status: 'pending' })
    const both = (await s.api('GET', '/templates', { key: dev.key })).body.items.filter((t: any) => t.name === 'welcome')
    expect(Object.fromEntries(both.map((t: any) => [t.language, t.status]))).toEqual({ en: 'draft', hi: 'pending' })
  })
})

describe('a rejection is notified', () => {
  test('in the developer workspace: the reason is kept and told; submitted again it clears', async () => {
    await create({ name: 'promo_offer', category: 'marketing' })
    await review('promo_offer', { status: 'pending' })
    const rejected = await review('promo_offer', { status: 'rejected', reason: 'Promotional content in a utility slot' })
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'Promotional content in a utility slot' })
    const notice = (await notices()).find((n) => n.kind === 'template.rejected' && n.data.name === 'promo_offer')
    expect(notice).toMatchObject({ title: 'Template rejected: promo_offer (en)', customer: null, data: { language: 'en', reason: 'Promotional content in a utility slot' } })
    expect(notice.body).toContain('Promotional content in a utility slot')
    const again = await review('promo_offer', { status: 'pending' })
    expect(again.body).toMatchObject({ status: 'pending', reason: null })
  })

  test("inside a customer: the developer is told, with the customer's name in the title", async () => {
    const customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme Stores' } })).body.id
    expect((await create({ name: 'receipt' }, customer)).status).toBe(201)
    await review('receipt', { status: 'pending' }, customer)
    expect((await review('receipt', { status: 'rejected' }, customer)).status).toBe(200)
    const notice = (await notices()).find((n) => n.kind === 'template.rejected' && n.data.name === 'receipt')
    expect(notice).toMatchObject({ title: '[Acme Stores] Template rejected: receipt (en)', customer: { id: customer, name: 'Acme Stores' } })
    expect((await notices(customer)).map((n) => n.kind)).toContain('template.rejected')
  })

  test('a pause is told too; nothing is told for a submission or an approval', async () => {
    await create({ name: 'quiet' })
    await review('quiet', { status: 'pending' })
    await review('quiet', { status: 'approved' })
    expect((await notices()).filter((n) => n.data.name === 'quiet')).toEqual([])
    await review('quiet', { status: 'paused', reason: 'Quality rating low' })
    const paused = (await notices()).filter((n) => n.data.name === 'quiet')
    expect(paused.map((n) => [n.kind, n.title])).toEqual([['template.paused', 'Template paused: quiet (en)']])
  })
})

describe('what a reply may send follows the review', () => {
  test('approved: sent; paused: 409 not approved', async () => {
    const ext = await s.developer({ plan: 'scale', name: 'Replies' })
    const agent = await s.agent(ext.key, { name: 'Ext' })
    await s.console('POST', `/workspaces/${ext.id}/phone-numbers`, { number: '+14155558700', source: 'rented', channel: 'chatapp', agent: agent.id, externalAgents: true })
    await create({ name: 'update', body: 'Update: {{1}}' }, ext.id)
    const inbound = await s.console('POST', `/workspaces/${ext.id}/inbound`, { channel: 'chatapp', from: '+14155558701', to: '+14155558700', text: 'Hi' })
    const send = () => s.api('POST', `/conversations/${inbound.body.conversationId}/reply`, { key: ext.key, body: { template: { name: 'update', variables: ['ready'] } } })
    expect((await send()).status).toBe(409)
    await review('update', { status: 'pending' }, ext.id)
    await review('update', { status: 'approved' }, ext.id)
    expect((await send()).status).toBe(200)
    await review('update', { status: 'paused' }, ext.id)
    const refused = await send()
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain('paused')
  })
})

describe("a template's number", () => {
  test("only a chat-app number the workspace holds: another workspace's is 400 naming number, as is its own voice number", async () => {
    const owner = await s.developer({ plan: 'scale', name: 'Holder' })
    const mine = await s.developer({ plan: 'scale', name: 'Namer' })
    const add = (ws: string, number: string, channel: string) => s.console('POST', `/workspaces/${ws}/phone-numbers`, { number, source: 'rented', channel })
    expect((await add(owner.id, '+14155558720', 'chatapp')).status).toBe(201)
    expect((await add(mine.id, '+14155558721', 'chatapp')).status).toBe(201)
    expect((await add(mine.id, '+14155558722', 'voice')).status).toBe(201)
    const theirs = await create({ name: 'theirs', number: '+14155558720' }, mine.id)
    expect(theirs.status).toBe(400)
    expect(theirs.body.error).toStartWith('number')
    expect((await create({ name: 'voice', number: '+14155558722' }, mine.id)).body.error).toStartWith('number')
    const own = await create({ name: 'own', number: '+14155558721' }, mine.id)
    expect(own.status).toBe(201)
    expect(own.body.number).toBe('+14155558721')
  })
})
