/**
 * Website chat's visitor API over HTTP: the public routes keyed by `webKey`, CORS,
 * signed sessions, the reply streamed as SSE from the published agent with live actions, the
 * inbox, analytics, lead capture (the welcome form and the agent's tool), escalation, takeover,
 * the limits, and the console's `web` inbound.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { RecordedEvent } from '../../src/events/bus'
import { webFeature } from '../../src/features/web'
import { startTestServer, type TestServer } from '../support/server'
import { readEvents } from '../support/sse'
import { until } from '../support/until'

const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.`

let s: TestServer
let dev: { id: string; key: string }
let agent: { id: string; webKey: string }
const events: RecordedEvent[] = []
const ORIGIN = 'http://shop.example'

const web = (method: string, path: string, body?: unknown) =>
  fetch(`${s.url}/api/v1/web/${path}`, { method, headers: { origin: ORIGIN, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any, headers: res.headers })
const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const publish = async (id: string) => {
  const r = await fetch(`${s.url}/agents/${id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
  expect(r.status).toBe(200)
}
const newAgent = async (body: Record<string, unknown> = {}) => {
  const r = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Bean There', ...body } })
  expect(r.status).toBe(201)
  return { id: r.body.id as string, webKey: r.body.webKey as string }
}
const conversation = async (id: string) => ((await s.api('GET', '/conversations?channel=web&limit=100', { key: dev.key })).body.items as any[]).find((c) => c.id === id)
const start = async (key = agent.webKey) => (await json(await web('POST', `${key}/sessions`, {}))).body.session as string
const say = async (session: string, message: string, key = agent.webKey) => {
  await advance(2_000)
  const res = await web('POST', `${key}/messages`, { session, message })
  if (res.status !== 200) return { status: res.status, body: await res.json(), events: [] as Awaited<ReturnType<typeof readEvents>> }
  expect(res.headers.get('content-type')).toContain('text/event-stream')
  expect(res.headers.get('access-control-allow-origin')).toBe('*')
  return { status: 200, body: null, events: await readEvents(res) }
}

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  agent = await newAgent({ greeting: 'Hello from Bean There!', captureLeads: true, escalation: { onNoAnswer: false, onRequest: true } })
  expect((await s.api('POST', `/agents/${agent.id}/knowledge`, { key: dev.key, body: { text: FAQ, title: 'Shop FAQ' } })).status).toBe(201)
  await publish(agent.id)
  s.server.services.bus.subscribe((e) => void events.push(e))
})
afterAll(() => s.stop())

describe('the visitor API', () => {
  test('widget settings are public, with CORS for any origin', async () => {
    const pre = await fetch(`${s.url}/api/v1/web/${agent.webKey}/messages`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('*')
    expect(pre.headers.get('access-control-allow-headers')).toContain('content-type')
    const r = await json(await web('GET', agent.webKey))
    expect(r.status).toBe(200)
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    expect(r.body).toEqual({
      agent: { name: 'Bean There', greeting: 'Hello from Bean There!', language: 'auto' },
      widget: { theme: 'modern', accent: null, height: 600, welcomeScreen: true, welcomeCollectLeads: false },
      colours: { accent: '#2454d6', onAccent: '#ffffff' },
      call: true,
    })
  })

  test('unknown key 404, unpublished agent 409, disabled widget 409 — each with CORS and a plain error for the visitor', async () => {
    const unknown = await json(await web('GET', 'wk_nosuchkey000000'))
    expect(unknown.status).toBe(404)
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*')
    const draft = await newAgent()
    const unpublished = await json(await web('POST', `${draft.webKey}/sessions`, {}))
    expect(unpublished.status).toBe(409)
    expect(unpublished.body).toEqual({ error: 'this chat is not available right now', state: 'draft' })
    await publish(draft.id)
    expect((await s.api('PATCH', `/agents/${draft.id}`, { key: dev.key, body: { widget: { enabled: false } } })).status).toBe(200)
    const off = await json(await web('GET', draft.webKey))
    expect(off.status).toBe(409)
    expect(off.body).toEqual({ error: 'this chat is not available right now', state: 'disabled' })
  })

  test('a chat answered from knowledge, streamed token by token, lands in the inbox on channel web', async () => {
    const session = await start()
    expect(session).toMatch(/^wv_/)
    const r = await say(session, 'What are your opening hours on Sunday?')
    expect(r.status).toBe(200)
    const names = r.events.map((e) => e.event)
    expect(names[0]).toBe('accepted')
    expect(names.at(-1)).toBe('reply')
    expect(names.filter((n) => n === 'token').length).toBeGreaterThan(1)
    const reply = r.events.at(-1)!.data
    expect(reply.text).toContain('8 am to 2 pm')
    expect(
      r.events
        .filter((e) => e.event === 'token')
        .map((e) => e.data.text)
        .join(''),
    ).toBe(reply.text)
    const conversationId = r.events[0]!.data.conversationId
    expect(await conversation(conversationId)).toMatchObject({ channel: 'web', test: false, status: 'active', agent: agent.id })
    // Resuming the session hands back the conversation so far.
    const resumed = await json(await web('POST', `${agent.webKey}/sessions`, { session }))
    expect(resumed.status).toBe(200)
    expect(resumed.body).toMatchObject({ resumed: true, session, conversationId })
    expect(resumed.body.messages.map((m: any) => m.author)).toEqual(['customer', 'agent'])
    const stats = await s.api('GET', `/agents/${agent.id}/analytics?days=1`, { key: dev.key })
    expect(stats.body.channels.find((c: any) => c.kind === 'web').conversations).toBe(1)
    expect(stats.body.totals.agent_replies).toBe(1)
  })

  test('sessions are signed: a forged one or one of another widget is 401', async () => {
    const session = await start()
    const other = await newAgent()
    await publish(other.id)
    for (const [key, token] of [
      [agent.webKey, session.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))],
      [other.webKey, session],
    ] as const) {
      const r = await json(await web('POST', `${key}/messages`, { session: token, message: 'hi' }))
      expect(r.status).toBe(401)
      expect(r.body.error).toContain('session')
    }
  })

  test('the agent captures a lead and escalates live; the welcome form is a lead too', async () => {
    const session = await start()
    const lead = await say(session, 'Please call me back, my email is ana@example.com')
    expect(lead.events.at(-1)!.event).toBe('reply')
    const conversationId = lead.events[0]!.data.conversationId
    expect(
      events.some((e) => e.type === 'lead.captured' && (e.data as any).conversationId === conversationId && (e.data as any).email === 'ana@example.com' && (e.data as any).channel === 'web'),
    ).toBe(true)
    await say(session, 'I want to talk to a human please')
    expect((await conversation(conversationId)).status).toBe('escalated')
    expect(events.some((e) => e.type === 'conversation.escalated' && (e.data as any).conversationId === conversationId && (e.data as any).test === false)).toBe(true)

    const fresh = await start()
    const form = await json(await web('POST', `${agent.webKey}/lead`, { session: fresh, name: 'Ravi', email: 'ravi@example.com', phone: '+1 415 555 0100' }))
    expect(form.status).toBe(201)
    expect(form.body).toMatchObject({ name: 'Ravi', email: 'ravi@example.com', phone: '+14155550100' })
    expect(events.some((e) => e.type === 'lead.captured' && (e.data as any).conversationId === form.body.conversationId && (e.data as any).name === 'Ravi')).toBe(true)
    const bad = await json(await web('POST', `${agent.webKey}/lead`, { session: fresh, email: 'not-an-address' }))
    expect(bad.status).toBe(400)
    expect(bad.body.error).toContain('email')
  })

  test('a teammate takes over: the visitor gets no reply from the agent', async () => {
    const session = await start()
    const first = await say(session, 'Hello')
    const conversationId = first.events[0]!.data.conversationId
    expect((await s.console('POST', `/workspaces/${dev.id}/conversations/${conversationId}/takeover`)).status).toBe(200)
    const after = await say(session, 'Are you still there?')
    expect(after.events.map((e) => e.event)).toEqual(['accepted', 'silent'])
    const messages = await s.api('GET', `/conversations/${conversationId}/messages`, { key: dev.key })
    expect(messages.body.items.map((m: any) => m.author)).toEqual(['customer', 'agent', 'customer'])
  })

  test('a teammate writes to the visitor: it takes the conversation over and reaches the open widget at once', async () => {
    const session = await start()
    // The widget listens before the visitor has written anything.
    const abort = new AbortController()
    const res = await fetch(`${s.url}/api/v1/web/${agent.webKey}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify({ session }),
      signal: abort.signal,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const received: any[] = []
    let ready!: () => void
    const isReady = new Promise<void>((r) => (ready = r))
    const reading = readEvents(res, (e) => (e.event === 'ready' ? ready() : received.push(e))).catch(() => {})
    await isReady
    const first = await say(session, 'Hello, is anyone there?')
    const conversationId = first.events[0]!.data.conversationId
    const wrote = await s.console('POST', `/workspaces/${dev.id}/conversations/${conversationId}/messages`, { text: 'Hi, this is Maya from the team.' })
    expect(wrote.status).toBe(201)
    expect(wrote.body).toMatchObject({ author: 'teammate', text: 'Hi, this is Maya from the team.' })
    await until(
      'the teammate message on the stream',
      async () => received,
      (r) => r.length > 0,
    )
    expect(received[0]).toMatchObject({ event: 'message', data: { id: wrote.body.id, author: 'teammate', text: 'Hi, this is Maya from the team.' } })
    abort.abort()
    await reading
    expect((await conversation(conversationId)).status).toBe('handled')
    const next = await say(session, 'Thanks Maya')
    expect(next.events.map((e) => e.event)).toEqual(['accepted', 'silent'])
    const resumed = await json(await web('POST', `${agent.webKey}/sessions`, { session }))
    expect(resumed.body.messages.map((m: any) => m.author)).toEqual(['customer', 'agent', 'teammate', 'customer'])
    // A test chat has nobody on the other end: 409; blank text 400 (other channels: messaging-teammate.test.ts).
    const trial = await s.api('POST', `/agents/${agent.id}/test-chat`, { key: dev.key, body: { message: 'Hello' } })
    expect(trial.status).toBe(200)
    const refused = await s.console('POST', `/workspaces/${dev.id}/conversations/${trial.body.session}/messages`, { text: 'Hi' })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toContain('test chat')
    expect((await s.console('POST', `/workspaces/${dev.id}/conversations/${conversationId}/messages`, { text: '  ' })).status).toBe(400)
  })

  test('limits: 4,000 characters, blank, unknown fields, and the per-visitor rate (429 with Retry-After)', async () => {
    const session = await start()
    const long = await json(await web('POST', `${agent.webKey}/messages`, { session, message: 'x'.repeat(4_001) }))
    expect(long.status).toBe(400)
    expect(long.body.error).toContain('message')
    expect((await json(await web('POST', `${agent.webKey}/messages`, { session, message: '   ' }))).status).toBe(400)
    expect((await json(await web('POST', `${agent.webKey}/messages`, { session, message: 'hi', admin: true }))).status).toBe(400)
    const malformed = await fetch(`${s.url}/api/v1/web/${agent.webKey}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    expect(malformed.status).toBe(400)
    await advance(10_000)
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) {
      const res = await web('POST', `${agent.webKey}/messages`, { session, message: `hello ${i}` })
      statuses.push(res.status)
      if (res.status === 200) await readEvents(res)
      else {
        expect(res.headers.get('retry-after')).toBeTruthy()
        expect(res.headers.get('access-control-allow-origin')).toBe('*')
      }
    }
    expect(statuses.filter((x) => x === 200)).toHaveLength(10)
    expect(statuses.at(-1)).toBe(429)
  })

  test("the console's web inbound answers as the widget would", async () => {
    const r = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'web', from: 'visitor-1', to: agent.id, text: 'What are your opening hours on Sunday?' })
    expect(r.status).toBe(201)
    await s.server.services.of(webFeature).web.settled()
    const messages = await s.api('GET', `/conversations/${r.body.conversationId}/messages`, { key: dev.key })
    expect(messages.body.items[0].author).toBe('agent')
    expect(messages.body.items[0].parts[0].text).toContain('8 am to 2 pm')
    expect((await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'web', from: 'bad id!', to: agent.id, text: 'hi' })).status).toBe(400)
  })

  test('the visitor API is in the v1 OpenAPI document', async () => {
    const doc = (await (await fetch(`${s.url}/api/v1/docs/json`)).json()) as any
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/web/{webKey}',
        '/api/v1/web/{webKey}/sessions',
        '/api/v1/web/{webKey}/messages',
        '/api/v1/web/{webKey}/lead',
        '/api/v1/web/{webKey}/events',
        '/api/v1/web/{webKey}/calls',
      ]),
    )
  })
})
