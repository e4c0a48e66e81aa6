/**
 * Inbound chat-app messages end to end on the sandbox platform: the agent
 * answers from knowledge on the platform with receipts; one conversation per customer and number;
 * external agents get `message.received` instead; STOP opts out; a teammate's takeover silences
 * the agent; the console's refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { messagingFeature } from '../../src/features/messaging'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale', name: 'Chat' })
  agent = (await s.agent(dev.key, { name: 'Bean There' })).id
  expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' } })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550400', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
})
afterAll(() => s?.stop())

const platform = () => s.server.services.of(messagingFeature).sandbox
const inbound = (body: Record<string, unknown>, ws = dev.id) => s.console('POST', `/workspaces/${ws}/inbound`, { channel: 'chatapp', ...body })
const events = async (type: string) => (await s.server.services.store.collection<any>({ name: 'events', indexes: [] })).find({ type })

describe('an inbound message', () => {
  test('is answered by the agent on the platform, from knowledge; receipts mark the reply delivered', async () => {
    const r = await inbound({ from: '+1 (415) 555-0401', to: '+14155550400', text: 'What time do you open on Sunday?' })
    expect(r.status).toBe(201)
    expect(r.body.conversationId).toStartWith('conv_')
    expect(r.body.messageId).toStartWith('msg_')
    const sent = await until(
      'the reply sent',
      async () => platform().sent.filter((m) => m.to === '+14155550401'),
      (m) => m.length === 1,
    )
    expect(sent[0]).toMatchObject({ from: '+14155550400', to: '+14155550401', content: { type: 'text' } })
    expect((sent[0]!.content as { text: string }).text).toContain('8 am to 2 pm')
    const conversation = (await s.api('GET', '/conversations?channel=chatapp', { key: dev.key })).body.items.find((c: any) => c.id === r.body.conversationId)
    expect(conversation).toMatchObject({ channel: 'chatapp', customer: { phone: '+14155550401' }, status: 'active' })
    expect(conversation.lastInboundAt).toBe(r.body.receivedAt)
    // The person became a contact.
    const contacts = await s.server.services.store.collection<any>({ name: 'contacts', indexes: [] })
    expect(await contacts.findOne({ workspaceId: dev.id, phone: '+14155550401' })).not.toBeNull()
    const messages = await s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
    const reply = await until(
      'delivered',
      async () => (await messages.find({ conversationId: r.body.conversationId, author: 'agent' }))[0],
      (m) => m?.delivery?.status === 'delivered',
    )
    expect(reply.delivery.platformMessageId).toBe(sent[0]!.platformMessageId)

    // The same customer on the same number: the same conversation.
    const again = await inbound({ from: '+14155550401', text: 'Thanks!' })
    expect(again.body.conversationId).toBe(r.body.conversationId)
  })

  test('external agents on: message.received goes out and the agent stays quiet', async () => {
    const other = await s.developer({ plan: 'scale', name: 'External' })
    const a = (await s.agent(other.key, { name: 'Ext' })).id
    expect((await s.console('POST', `/workspaces/${other.id}/phone-numbers`, { number: '+14155550410', source: 'rented', channel: 'chatapp', agent: a, externalAgents: true })).status).toBe(201)
    const r = await inbound({ from: '+14155550411', text: 'Hello?' }, other.id)
    expect(r.status).toBe(201)
    const published = await until(
      'message.received',
      () => events('message.received'),
      (e) => e.some((x: any) => x.data.messageId === r.body.messageId),
    )
    const event = published.find((x: any) => x.data.messageId === r.body.messageId)!
    expect(event.data).toMatchObject({
      conversationId: r.body.conversationId,
      receivedAt: r.body.receivedAt,
      channel: 'chatapp',
      customer: { phone: '+14155550411' },
      parts: [{ type: 'text', text: 'Hello?' }],
    })
    // Every answer under way has been sent: none was started for this message.
    await s.server.services.of(messagingFeature).inbound.settled()
    expect(platform().sent.filter((m) => m.to === '+14155550411')).toEqual([])
  })

  test('STOP records the opt-out; nothing is sent back', async () => {
    const r = await inbound({ from: '+14155550402', text: 'STOP' })
    expect(r.status).toBe(201)
    const contacts = await s.server.services.store.collection<any>({ name: 'contacts', indexes: [] })
    expect((await contacts.findOne({ workspaceId: dev.id, phone: '+14155550402' })).optedOut).toBe(true)
    await s.server.services.of(messagingFeature).inbound.settled()
    expect(platform().sent.filter((m) => m.to === '+14155550402')).toEqual([])
  })

  test('a teammate who took the conversation over silences the agent', async () => {
    const first = await inbound({ from: '+14155550403', text: 'Hi there' })
    await until(
      'first answer',
      async () => platform().sent.filter((m) => m.to === '+14155550403'),
      (m) => m.length === 1,
    )
    expect((await s.console('POST', `/workspaces/${dev.id}/conversations/${first.body.conversationId}/takeover`)).status).toBe(200)
    await inbound({ from: '+14155550403', text: 'Are you still there?' })
    await s.server.services.of(messagingFeature).inbound.settled()
    expect(platform().sent.filter((m) => m.to === '+14155550403')).toHaveLength(1)
  })

  test('refusals name the field', async () => {
    expect((await inbound({ from: 'call me', text: 'hi' })).body.error).toContain('from')
    expect((await inbound({ from: '+14155550404', to: '+14155559999', text: 'hi' })).status).toBe(404)
    expect((await inbound({ from: '+14155550404', text: '' })).status).toBe(400)
    expect((await inbound({ channel: 'fax', from: '+14155550404', text: 'hi' })).status).toBe(400)
    const voice = await s.developer({ plan: 'scale', name: 'Voice only' })
    const a = (await s.agent(voice.key, { name: 'Voice agent' })).id
    expect((await s.console('POST', `/workspaces/${voice.id}/phone-numbers`, { number: '+14155550420', source: 'rented', agent: a })).status).toBe(201)
    const r = await inbound({ from: '+14155550404', to: '+14155550420', text: 'hi' }, voice.id)
    expect(r.status).toBe(400)
    expect(r.body.error).toContain('voice number')
  })
})

describe('POST /conversations/{id}/reply', () => {
  let ext: { id: string; key: string }
  const customerSays = async (from: string, text = 'Hello?') => (await inbound({ from, text }, ext.id)).body.conversationId as string
  const reply = (id: string, body: unknown, headers: Record<string, string> = {}) => s.api('POST', `/conversations/${id}/reply`, { key: ext.key, body, headers })
  beforeAll(async () => {
    ext = await s.developer({ plan: 'scale', name: 'External replies' })
    const a = (await s.agent(ext.key, { name: 'Ext' })).id
    expect((await s.console('POST', `/workspaces/${ext.id}/phone-numbers`, { number: '+14155550430', source: 'rented', channel: 'chatapp', agent: a, externalAgents: true })).status).toBe(201)
  })

  test("text within the window: sent, stored as the agent's, charged; an Idempotency-Key replays without sending twice", async () => {
    const id = await customerSays('+14155550431')
    const r = await reply(id, { text: 'Hi! How can I help?' }, { 'idempotency-key': 'reply-1' })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ok: true })
    expect(
      platform()
        .sent.filter((m) => m.to === '+14155550431')
        .map((m) => m.content),
    ).toEqual([{ type: 'text', text: 'Hi! How can I help?' }])
    const again = await reply(id, { text: 'Hi! How can I help?' }, { 'idempotency-key': 'reply-1' })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(platform().sent.filter((m) => m.to === '+14155550431')).toHaveLength(1)
    const messages = (await s.api('GET', `/conversations/${id}/messages`, { key: ext.key })).body.items
    expect(messages[0]).toMatchObject({ author: 'agent', parts: [{ type: 'text', text: 'Hi! How can I help?' }] })
    const usage = await s.server.services.store.collection<any>({ name: 'usage_records', indexes: [] })
    const charges = await usage.find({ workspaceId: ext.id, kind: 'reply_charge' })
    // docs/spec.md Limits: 10% of the messaging platform's rate, here 5,000 USD micro-units for a free-form message.
    expect(charges.map((c: any) => c.costMicro)).toEqual([500])
  })

  test('media: sent as given; caption and filename only where they belong; https and public only', async () => {
    const id = await customerSays('+14155550432')
    expect((await reply(id, { media: { type: 'image', url: 'https://cdn.example.com/menu.png', caption: 'Our menu' } })).status).toBe(200)
    expect(platform().sent.at(-1)!.content).toEqual({ type: 'media', media: { type: 'image', url: 'https://cdn.example.com/menu.png', caption: 'Our menu' } })
    const refused: [unknown, string][] = [
      [{ media: { type: 'audio', url: 'https://cdn.example.com/a.mp3', caption: 'x' } }, 'media.caption'],
      [{ media: { type: 'image', url: 'https://cdn.example.com/a.png', filename: 'a.png' } }, 'media.filename'],
      [{ media: { type: 'file', url: 'http://cdn.example.com/a.pdf' } }, 'media.url'],
      [{ media: { type: 'file', url: 'https://127.0.0.1/a.pdf' } }, 'media.url'],
      [{ text: 'a', media: { type: 'file', url: 'https://cdn.example.com/a.pdf' } }, 'not text and media'],
      [{}, 'send one of'],
      [{ text: 'x'.repeat(4097) }, 'text'],
    ]
    for (const [body, words] of refused) {
      const r = await reply(id, body)
      expect(r.status).toBe(400)
      expect(r.body.error).toContain(words)
    }
  })

  test('the 404 and 409 rows', async () => {
    expect((await reply('conv_nope', { text: 'hi' })).status).toBe(404)
    // External agents off: the agent answers (the first workspace's number).
    const answered = await inbound({ from: '+14155550440', text: 'Hi' })
    expect((await s.api('POST', `/conversations/${answered.body.conversationId}/reply`, { key: dev.key, body: { text: 'hi' } })).body.error).toContain('external agents are off')
    const taken = await customerSays('+14155550433')
    await s.console('POST', `/workspaces/${ext.id}/conversations/${taken}/takeover`)
    expect((await reply(taken, { text: 'hi' })).body.error).toContain('teammate')
    const optedOut = await customerSays('+14155550434')
    await inbound({ from: '+14155550434', text: 'stop' }, ext.id)
    expect((await reply(optedOut, { text: 'hi' })).body.error).toContain('opted out')
    const late = await customerSays('+14155550435')
    await s.console('POST', '/clock/advance', { ms: 24 * 60 * 60 * 1000 + 1 })
    const closed = await reply(late, { text: 'hi' })
    expect(closed.status).toBe(409)
    expect(closed.body.error).toContain('24-hour window is closed')
  })

  test('a platform refusal is a 502 and releases the Idempotency-Key', async () => {
    const id = await customerSays('+14155550436')
    platform().refuse.add('+14155550436')
    const refused = await reply(id, { text: 'hello' }, { 'idempotency-key': 'reply-502' })
    expect(refused.status).toBe(502)
    expect(refused.body.error).toContain('not on the messaging app')
    platform().refuse.delete('+14155550436')
    const retried = await reply(id, { text: 'hello' }, { 'idempotency-key': 'reply-502' })
    expect(retried.status).toBe(200)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
  })
})

describe('templates and forms', () => {
  let ext: { id: string; key: string }
  let agentId: string
  const customerSays = async (from: string, text = 'Hello?') => (await inbound({ from, to: '+14155550450', text }, ext.id)).body.conversationId as string
  const reply = (id: string, body: unknown) => s.api('POST', `/conversations/${id}/reply`, { key: ext.key, body })
  const template = (body: Record<string, unknown>) => s.console('POST', `/workspaces/${ext.id}/templates`, { language: 'en', category: 'utility', ...body })
  beforeAll(async () => {
    ext = await s.developer({ plan: 'scale', name: 'Templates' })
    agentId = (await s.agent(ext.key, { name: 'Tpl' })).id
    expect((await s.console('POST', `/workspaces/${ext.id}/phone-numbers`, { number: '+14155550450', source: 'rented', channel: 'chatapp', agent: agentId, externalAgents: true })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${ext.id}/phone-numbers`, { number: '+14155550459', source: 'rented', channel: 'chatapp', agent: agentId, externalAgents: true })).status).toBe(201)
    const made = await template({ name: 'order_update', body: 'Your order {{1}} ships {{2}}.', variableLabels: [{ position: 1, sample: 'A-1' }] })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ name: 'order_update', status: 'approved', variableCount: 2, headerKind: 'none', number: null })
    expect((await template({ name: 'spring_sale', category: 'marketing', body: 'Spring sale: {{1}} off!' })).status).toBe(201)
    expect((await template({ name: 'draft_one', body: 'Hi', status: 'pending' })).status).toBe(201)
    expect((await template({ name: 'other_number', body: 'Hi', number: '+14155550459' })).status).toBe(201)
    expect((await template({ name: 'with_image', body: 'Look', headerKind: 'image' })).status).toBe(201)
    expect((await template({ name: 'bad', body: 'Hi {{2}}' })).status).toBe(400)
    expect((await s.console('POST', `/workspaces/${ext.id}/forms`, { name: 'Booking', agent: agentId })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${ext.id}/forms`, { name: 'Hidden', agent: agentId, published: false })).status).toBe(201)
  })

  test('GET /templates lists them newest first, filtered by status and category', async () => {
    const all = (await s.api('GET', '/templates', { key: ext.key })).body.items.map((t: any) => t.name)
    expect(all).toEqual(['with_image', 'other_number', 'draft_one', 'spring_sale', 'order_update'])
    expect((await s.api('GET', '/templates?status=pending', { key: ext.key })).body.items.map((t: any) => t.name)).toEqual(['draft_one'])
    expect((await s.api('GET', '/templates?category=marketing', { key: ext.key })).body.items.map((t: any) => t.name)).toEqual(['spring_sale'])
    expect((await s.api('GET', '/templates?status=nope', { key: ext.key })).status).toBe(400)
  })

  test('a template works after the window closed; its values must fit; 404 and 409 rows', async () => {
    const id = await customerSays('+14155550451')
    await s.console('POST', '/clock/advance', { ms: 25 * 60 * 60 * 1000 })
    expect((await reply(id, { text: 'hi' })).status).toBe(409)
    const sent = await reply(id, { template: { name: 'order_update', variables: ['A-17', 'tomorrow'] } })
    expect(sent.status).toBe(200)
    expect(platform().sent.at(-1)!.content).toEqual({ type: 'template', template: { name: 'order_update', language: 'en', variables: ['A-17', 'tomorrow'] } })
    const messages = (await s.api('GET', `/conversations/${id}/messages`, { key: ext.key })).body.items
    expect(messages[0].parts).toEqual([{ type: 'text', text: 'Your order A-17 ships tomorrow.' }])
    expect((await reply(id, { template: { name: 'order_update', variables: ['A-17'] } })).body.error).toContain('template.variables')
    expect((await reply(id, { template: { name: 'with_image' } })).body.error).toContain('template.headerMediaUrl')
    expect((await reply(id, { template: { name: 'with_image', headerMediaUrl: 'https://cdn.example.com/h.png' } })).status).toBe(200)
    expect((await reply(id, { template: { name: 'nope' } })).status).toBe(404)
    expect((await reply(id, { template: { name: 'order_update', language: 'fr', variables: ['a', 'b'] } })).status).toBe(404)
    const pending = await reply(id, { template: { name: 'draft_one' } })
    expect(pending.status).toBe(409)
    expect(pending.body.error).toContain('pending')
    expect((await reply(id, { template: { name: 'other_number' } })).body.error).toContain('another number')
  })

  test('opt-outs stop marketing templates, not utility ones', async () => {
    const id = await customerSays('+14155550452')
    await inbound({ from: '+14155550452', to: '+14155550450', text: 'STOP' }, ext.id)
    expect((await reply(id, { template: { name: 'spring_sale', variables: ['20%'] } })).status).toBe(409)
    expect((await reply(id, { template: { name: 'order_update', variables: ['A-2', 'today'] } })).status).toBe(200)
  })

  test("forms: a published form of the number's agent, within the window", async () => {
    const id = await customerSays('+14155550453')
    expect((await reply(id, { form: 'Booking' })).status).toBe(200)
    expect(platform().sent.at(-1)!.content).toEqual({ type: 'form', form: { name: 'Booking' } })
    expect((await reply(id, { form: { name: 'Booking' } })).status).toBe(200)
    expect((await reply(id, { form: 'Nope' })).status).toBe(404)
    const hidden = await reply(id, { form: 'Hidden' })
    expect(hidden.status).toBe(400)
    expect(hidden.body.error).toContain('not published')
  })
})

describe('GET /chatapp/summary', () => {
  test('received, sent and how far each got, failures by code, series in the workspace time zone, cost not yet priced', async () => {
    const w = await s.developer({ plan: 'scale', name: 'Totals', timezone: 'Asia/Kolkata' })
    const a = (await s.agent(w.key, { name: 'Totals agent' })).id
    expect((await s.console('POST', `/workspaces/${w.id}/phone-numbers`, { number: '+14155550470', source: 'rented', channel: 'chatapp', agent: a })).status).toBe(201)
    platform().refuse.add('+14155550473')
    for (const [from, text] of [
      ['+14155550471', 'Hi'],
      ['+14155550472', 'Hello'],
      ['+14155550473', 'Hey'],
    ] as const)
      expect((await inbound({ from, text }, w.id)).status).toBe(201)
    await s.server.services.of(messagingFeature).inbound.settled()
    const messages = await s.server.services.store.collection<any>({ name: 'messages', indexes: [] })
    await until(
      'receipts',
      async () => (await messages.find({ workspaceId: w.id, author: 'agent' })).filter((m: any) => m.delivery?.status === 'delivered').length,
      (n) => n === 2,
    )
    const r = await s.api('GET', '/chatapp/summary?days=1', { key: w.key })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ timezone: 'Asia/Kolkata', grain: 'hour', received: 3, sent: 3, delivered: 2, read: 0, failed: 1, noReceipt: 0, errors: [{ error: '131026', n: 1 }] })
    expect(r.body.from).toBe(r.body.to)
    expect(r.body.series).toHaveLength(24)
    expect(r.body.series.reduce((n: number, b: any) => n + b.received, 0)).toBe(3)
    expect(r.body.series.reduce((n: number, b: any) => n + b.sent, 0)).toBe(3)
    expect(r.body.cost).toEqual({ currency: 'USD', totalMicro: 15_000, complete: true, byCategory: [{ category: 'service', messages: 3, costMicro: 15_000 }] })
    const week = (await s.api('GET', '/chatapp/summary', { key: w.key })).body
    expect(week).toMatchObject({ grain: 'day', received: 3 })
    expect(week.series).toHaveLength(7)
    const range = (await s.api('GET', `/chatapp/summary?from=${week.from}&to=${week.to}`, { key: w.key })).body
    expect(range.received).toBe(3)
    for (const [q, field] of [
      ['days=0', 'days'],
      ['days=91', 'days'],
      [`days=3&from=${week.from}&to=${week.to}`, 'days'],
      [`from=${week.to}&to=${week.from}`, 'from'],
      ['from=2020-01-01&to=2021-12-31', 'to'],
      ['from=yesterday&to=2026-01-01', 'from'],
    ]) {
      const bad = await s.api('GET', `/chatapp/summary?${q}`, { key: w.key })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toContain(field)
    }
  })
})

describe('the email channel', () => {
  test('an email is answered by the agent by email (the outbox here); one conversation per address and agent', async () => {
    const w = await s.developer({ plan: 'scale', name: 'Email' })
    const a = (await s.agent(w.key, { name: 'Mail agent' })).id
    expect((await s.api('POST', `/agents/${a}/knowledge`, { key: w.key, body: { text: 'Opening hours\n\nWe are open from 8 am to 2 pm on Sundays.', title: 'Hours' } })).status).toBe(201)
    const r = await s.console('POST', `/workspaces/${w.id}/inbound`, { channel: 'email', from: 'Priya@Example.com', text: 'What time do you open on Sunday?' })
    expect(r.status).toBe(201)
    await s.server.services.of(messagingFeature).emailInbound.settled()
    const outbox = (await s.console('GET', '/outbox?limit=100')).body.items.filter((m: any) => m.to === 'priya@example.com')
    expect(outbox).toHaveLength(1)
    expect(outbox[0].subject).toBe('Re: your message to Mail agent')
    expect(outbox[0].text).toContain('8 am to 2 pm')
    const again = await s.console('POST', `/workspaces/${w.id}/inbound`, { channel: 'email', from: 'priya@example.com', to: a, text: 'Thanks!' })
    expect(again.body.conversationId).toBe(r.body.conversationId)
    const listed = (await s.api('GET', '/conversations?channel=email', { key: w.key })).body.items
    expect(listed.map((c: any) => c.id)).toEqual([r.body.conversationId])

    expect((await s.console('POST', `/workspaces/${w.id}/inbound`, { channel: 'email', from: 'not an address', text: 'hi' })).body.error).toContain('from')
    expect((await s.console('POST', `/workspaces/${w.id}/inbound`, { channel: 'email', from: 'a@b.co', to: 'ag_nope', text: 'hi' })).status).toBe(404)
    await s.api('POST', '/agents', { key: w.key, body: { name: 'Second agent' } })
    const ambiguous = await s.console('POST', `/workspaces/${w.id}/inbound`, { channel: 'email', from: 'a@b.co', text: 'hi' })
    expect(ambiguous.status).toBe(400)
    expect(ambiguous.body.error).toContain('several agents')
  })
})
