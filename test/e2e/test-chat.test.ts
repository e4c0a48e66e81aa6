import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import type { RecordedEvent } from '../../src/events/bus'
import { conversationsFeature } from '../../src/features/conversations'
import { usageFeature } from '../../src/features/usage'
import { createLanguageModel } from '../../src/providers/llm'
import { startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'

const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Refunds

Tell us within 48 hours and we refund you in full. Refunds take 3 to 5 working days to reach your card.`

let s: TestServer
let dev: { id: string; key: string }
let agent: string
const events: RecordedEvent[] = []

const newAgent = async (body: Record<string, unknown> = {}, key = dev.key) => {
  const r = await s.api('POST', '/agents', { key, body: { name: 'Tester', ...body } })
  if (r.status !== 201) throw new Error(`agent: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
/** A message as a person would send it: a couple of seconds after the last one. */
const say = async (id: string, message: string, session?: string, key = dev.key) => {
  await advance(2000)
  return s.api('POST', `/agents/${id}/test-chat`, { key, body: session === undefined ? { message } : { message, session } })
}

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  agent = await newAgent({ greeting: 'Hello from Bean There!' })
  const doc = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })
  expect(doc.status).toBe(201)
  s.server.services.bus.subscribe((e) => void events.push(e))
})
afterAll(() => s.stop())

describe('test chat with the local model (no network)', () => {
  test('answers from a pasted document and cites it', async () => {
    const r = await say(agent, 'What are your opening hours on Sunday?')
    expect(r.status).toBe(200)
    expect(r.body.session).toMatch(/^conv_/)
    expect(r.body.reply).toContain('8 am to 2 pm')
    expect(r.body.reply).toContain('(Source: Shop FAQ)')
    expect(r.body.tools).toHaveLength(1)
    expect(r.body.tools[0]).toMatchObject({ name: 'search_knowledge', input: { query: 'What are your opening hours on Sunday?' }, output: { found: true } })
    expect(r.body.tools[0].output.passages[0]).toMatchObject({ title: 'Shop FAQ' })
  })

  test('the session continues the same conversation; omitting it starts anew', async () => {
    const one = await say(agent, 'How long do refunds take to reach my card?')
    const two = await say(agent, 'Hi', one.body.session)
    expect(two.status).toBe(200)
    expect(two.body.session).toBe(one.body.session)
    const messages = await s.api('GET', `/conversations/${one.body.session}/messages`, { key: dev.key })
    expect(messages.body.items.map((m: any) => m.author)).toEqual(['agent', 'customer', 'agent', 'customer'])
    expect(messages.body.items[3].parts).toEqual([{ type: 'text', text: 'How long do refunds take to reach my card?' }])
    const fresh = await say(agent, 'Hello')
    expect(fresh.body.session).not.toBe(one.body.session)
  })

  test('a session that is not a test chat of this agent is 400 naming session', async () => {
    const other = await newAgent()
    const theirs = (await say(other, 'Hello')).body.session
    const elsewhere = await s.developer()
    const foreignAgent = await newAgent({}, elsewhere.key)
    const foreign = (await say(foreignAgent, 'Hello', undefined, elsewhere.key)).body.session
    for (const session of [theirs, foreign, 'conv_nothere', 'not-a-session']) {
      const r = await say(agent, 'Hello again', session)
      expect({ session, status: r.status, field: r.body.field }).toEqual({ session, status: 400, field: 'session' })
    }
  })

  test('message is required, 1–4,000 characters, and not blank', async () => {
    for (const [body, field] of [
      [{}, 'message'],
      [{ message: '' }, 'message'],
      [{ message: 'x'.repeat(4001) }, 'message'],
      [{ message: '   ' }, 'message'],
      [{ message: 'hi', extra: 1 }, 'extra'],
    ] as const) {
      const r = await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body })
      expect({ body, status: r.status, field: r.body.field }).toEqual({ body, status: 400, field })
    }
    expect((await say(agent, 'x'.repeat(4000))).status).toBe(200)
  })

  test('a read key is refused with 403; a build key may test', async () => {
    const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'reader', scope: 'read' })
    const build = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'builder', scope: 'build' })
    expect((await say(agent, 'Hello', undefined, read.body.key)).status).toBe(403)
    expect((await say(agent, 'Hello', undefined, build.body.key)).status).toBe(200)
  })

  test('an agent of another workspace is 404; website chat off is 409', async () => {
    const elsewhere = await s.developer()
    expect((await say(agent, 'Hello', undefined, elsewhere.key)).status).toBe(404)
    const off = await newAgent({ widget: { enabled: false } })
    const r = await say(off, 'Hello')
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('website chat is switched off')
  })

  test('a model whose provider has no key configured is 503 naming the key', async () => {
    const gpt = await newAgent({ model: 'gpt-4o-mini' })
    const r = await say(gpt, 'Hello')
    expect(r.status).toBe(503)
    expect(r.body).toMatchObject({ model: 'gpt-4o-mini', missing: 'OPENAI_API_KEY' })
    // A refused turn writes nothing: no empty conversation in the inbox or in analytics.
    const inbox = await s.api('GET', '/conversations?limit=100', { key: dev.key })
    expect(inbox.body.items.filter((c: any) => c.agent === gpt)).toEqual([])
    expect((await s.api('GET', `/agents/${gpt}/analytics`, { key: dev.key })).body.totals).toMatchObject({ conversations: 0, messages: 0 })
  })

  test('messages faster than a person could type are 429 with Retry-After', async () => {
    const first = await say(agent, 'Hello')
    const quick = await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: { message: 'again', session: first.body.session } })
    expect(quick.status).toBe(429)
    expect(quick.headers.get('retry-after')).toBe('1')
    // The conventions' headers, for the rule it broke (one message a second in a session).
    expect(quick.headers.get('x-ratelimit-limit')).toBe('1')
    expect(quick.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(Number(quick.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0)
    await advance(1000)
    expect((await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: { message: 'again', session: first.body.session } })).status).toBe(200)
  })

  test('a burst of new sessions on one agent is 429 too', async () => {
    const busy = await newAgent()
    await advance(10_000)
    const statuses: number[] = []
    for (let i = 0; i < 21; i++) statuses.push((await s.api('POST', `/agents/${busy}/test-chat`, { key: dev.key, body: { message: `hello ${i}` } })).status)
    expect(statuses.slice(0, 20).every((x) => x === 200)).toBe(true)
    expect(statuses[20]).toBe(429)
    const refused = await s.api('POST', `/agents/${busy}/test-chat`, { key: dev.key, body: { message: 'one more' } })
    expect(refused.headers.get('x-ratelimit-limit')).toBe('20')
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(refused.headers.get('retry-after')).not.toBeNull()
  })

  test('escalation is real: conversation.escalated on the bus and the conversation escalated', async () => {
    const r = await say(agent, 'Can I talk to a real person please?')
    expect(r.body.tools[0]).toMatchObject({ name: 'escalate', output: { escalated: true } })
    const event = events.find((e) => e.type === 'conversation.escalated' && e.data.conversationId === r.body.session)
    expect(event).toMatchObject({ workspaceId: dev.id, agentId: agent, data: { channel: 'web', test: true, reason: 'Can I talk to a real person please?', status: 'escalated' } })
    const list = await s.api('GET', '/conversations?limit=100', { key: dev.key })
    expect(list.body.items.find((c: any) => c.id === r.body.session)).toMatchObject({ status: 'escalated', test: true, channel: 'web' })
  })

  test('lead capture is real: lead.captured on the bus', async () => {
    const r = await say(agent, 'My name is Asha Rao, email asha@example.com')
    expect(r.body.tools[0]).toMatchObject({ name: 'capture_lead', output: { captured: true } })
    const event = events.find((e) => e.type === 'lead.captured' && e.data.conversationId === r.body.session)
    expect(event).toMatchObject({ workspaceId: dev.id, agentId: agent, data: { name: 'Asha Rao', email: 'asha@example.com', phone: null, test: true, channel: 'web' } })
  })

  test('test chats are listed in the inbox on channel web, flagged test, and count as replies', async () => {
    const r = await say(agent, 'Hello')
    const web = await s.api('GET', '/conversations?channel=web&limit=100', { key: dev.key })
    const mine = web.body.items.find((c: any) => c.id === r.body.session)
    expect(mine).toEqual({
      id: r.body.session,
      agent,
      channel: 'web',
      customer: { id: null, phone: null },
      status: 'active',
      test: true,
      lastInboundAt: expect.any(String),
      createdAt: expect.any(String),
    })
    expect((await s.api('GET', '/conversations?channel=voice', { key: dev.key })).body.items).toEqual([])
    const replies = await s.server.services.of(usageFeature).ledger.records.count({ workspaceId: dev.id, kind: 'reply', conversationId: r.body.session })
    expect(replies).toBe(1)
  })
})

describe('test chat with an OpenAI-protocol model (local fake)', () => {
  test('schedule_callback is switched off and the agent says what it would have done', async () => {
    const fake = startOpenAIFake({ apiKey: 'sk-fake-key-123456' })
    const model = createLanguageModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-fake-key-123456', baseUrl: fake.baseUrl })
    const spy = spyOn(s.server.services.of(conversationsFeature).models, 'resolve').mockImplementation(async () => model)
    try {
      const caller = await newAgent({ scheduleCallbacks: true })
      fake.reply(
        { kind: 'stream', toolCalls: [{ id: 'call_cb', name: 'schedule_callback', args: ['{"when":"tomorrow 10:00","phone":"+14155550100"}'] }] },
        { kind: 'stream', text: ['In a real chat I would have booked a callback for tomorrow at 10:00.'] },
      )
      const r = await say(caller, 'Please call me back tomorrow at 10')
      expect(r.status).toBe(200)
      expect(r.body.tools).toEqual([
        {
          name: 'schedule_callback',
          input: { when: 'tomorrow 10:00', phone: '+14155550100' },
          output: 'Test chat: I would have booked a callback for tomorrow 10:00 to +14155550100. Nothing was booked.',
        },
      ])
      expect(r.body.reply).toBe('In a real chat I would have booked a callback for tomorrow at 10:00.')
      expect(fake.requests[0].body.tools.map((t: any) => t.function.name)).toContain('schedule_callback')
    } finally {
      spy.mockRestore()
      await fake.stop()
    }
  })
})
