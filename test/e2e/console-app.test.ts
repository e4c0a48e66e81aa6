/**
 * The console app's server side over HTTP: the page and its files (no token, compressed, cached),
 * stream tickets and the live stream (401 without a good ticket; a call's moves arrive, and only
 * to its own workspace's streams), and the console reads it uses.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createParser } from 'eventsource-parser'
import { chunks } from '../support/body'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
let s: TestServer
let dev: { id: string; key: string }
let agent: string

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  agent = (await s.agent(dev.key, { name: 'Ring', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550700', source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550701' })).status).toBe(201)
})
afterAll(() => s?.stop())

/** An open event stream: its events as they come, and `next(name, match)` to wait for one. */
async function openStream(path: string) {
  const controller = new AbortController()
  const res = await fetch(`${s.url}${path}`, { signal: controller.signal })
  const events: { event: string; data: any }[] = []
  if (res.status === 200) {
    const parser = createParser({ onEvent: (m) => void events.push({ event: m.event ?? 'message', data: JSON.parse(m.data) }) })
    const decoder = new TextDecoder()
    void (async () => {
      try {
        for await (const chunk of chunks(res)) parser.feed(decoder.decode(chunk, { stream: true }))
      } catch {
        /* closed by the test */
      }
    })()
  }
  return {
    res,
    events,
    next: (event: string, match: (data: any) => boolean = () => true, withinMs = 5_000) =>
      until(
        `a ${event} event`,
        async () => events.find((e) => e.event === event && match(e.data)) ?? null,
        (e) => e !== null,
        withinMs,
      ).then((e) => e!.data),
    close: () => controller.abort(),
  }
}

const ticket = async (workspace: string) => {
  const r = await s.console('POST', '/app/tickets', { workspace })
  expect(r.status).toBe(201)
  return r.body as { ticket: string; expiresAt: string; stream: string }
}

describe('the page and its files', () => {
  test('served without a token: the page revalidated, the files versioned, compressed and cached for a year', async () => {
    const page = await fetch(`${s.url}/console/app`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('cache-control')).toBe('no-cache')
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'")
    const html = await page.text()
    const base = /\/console\/app\/v\/[0-9a-f]{12}/.exec(html)![0]
    const again = await fetch(`${s.url}/console/app`, { headers: { 'if-none-match': page.headers.get('etag')! } })
    expect(again.status).toBe(304)

    const gz = await fetch(`${s.url}${base}/main.js`, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit)
    expect(gz.status).toBe(200)
    expect(gz.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    expect(gz.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(gz.headers.get('vary')).toBe('accept-encoding')
    const br = await fetch(`${s.url}${base}/app.css`, { headers: { 'accept-encoding': 'gzip, br' } })
    expect(br.headers.get('content-encoding')).toBe('br')
    expect(br.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(await br.text()).toContain(':focus-visible')
    const plain = await fetch(`${s.url}${base}/api.js`, { headers: { 'accept-encoding': 'identity' } })
    expect(plain.headers.get('content-encoding')).toBeNull()
    // The layout library comes from node_modules, through our routes.
    const elk = await fetch(`${s.url}${base}/vendor/elk-api.js`)
    expect(elk.status).toBe(200)
    expect(await elk.text()).toContain('workerUrl')
    expect((await fetch(`${s.url}${base}/nope.js`)).status).toBe(404)
    expect((await fetch(`${s.url}/console/app/v/000000000000/main.js`)).status).toBe(404)
  })
})

describe('tickets and the live stream', () => {
  test('a ticket needs the console token and an existing workspace', async () => {
    const bare = await fetch(`${s.url}/console/app/tickets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace: dev.id }) })
    expect(bare.status).toBe(401)
    expect((await s.console('POST', '/app/tickets', { workspace: 'ws_nope' })).status).toBe(404)
    expect((await s.console('POST', '/app/tickets', {})).status).toBe(400)
  })

  test('401 without a ticket, with a forged one, and with one used already; never the console token', async () => {
    expect((await fetch(`${s.url}/console/app/stream`)).status).toBe(401)
    expect((await fetch(`${s.url}/console/app/stream?ticket=abc.def`)).status).toBe(401)
    // The console token opens no stream: only a ticket does.
    expect((await fetch(`${s.url}/console/app/stream?ticket=${s.consoleToken}`)).status).toBe(401)
    expect((await fetch(`${s.url}/console/app/stream`, { headers: { authorization: `Bearer ${s.consoleToken}` } })).status).toBe(401)
    const t = await ticket(dev.id)
    const first = await openStream(t.stream)
    expect(first.res.status).toBe(200)
    expect(first.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(first.res.headers.get('cache-control')).toBe('no-store')
    expect(await first.next('ready')).toEqual({ workspace: dev.id, now: expect.any(Number) })
    const second = await fetch(`${s.url}${t.stream}`)
    expect(second.status).toBe(401)
    expect((await second.json()).error).toBe('the stream ticket was used already: ask for a new one')
    first.close()
  })

  test("a call's moves reach its workspace's stream (row, chart), and no other workspace's", async () => {
    const other = await s.developer()
    const mine = await openStream((await ticket(dev.id)).stream)
    const theirs = await openStream((await ticket(other.id)).stream)
    await Promise.all([mine.next('ready'), theirs.next('ready')])
    const hub = () => s.server.services.features.find((f) => f.feature.name === 'console-app')!.parts.services as { hub: { size: number } }
    expect(hub().hub.size).toBe(2)

    expect((await s.console('PUT', '/sandbox/phones/%2B14155550701', { pickup: 'answer', ringMs: SEC, lines: [], hangupAfterMs: 5 * SEC })).status).toBe(200)
    const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550701', purpose: 'Hello from the test.' } })
    expect(placed.status).toBe(202)
    const id = placed.body.id
    const ringing = await mine.next('call', (d) => d.call.id === id && d.call.status === 'ringing')
    expect(ringing.call).toMatchObject({ id, direction: 'outbound', phone: '+14155550701', agent: { id: agent, name: 'Ring' }, transcript: [] })
    expect(ringing.at).toBeNumber()
    expect(await mine.next('actor', (d) => d.id === `call:${id}` && d.state === 'ringing')).toMatchObject({ id: `call:${id}`, state: 'ringing' })
    await s.console('POST', '/clock/advance', { ms: SEC })
    await mine.next('actor', (d) => d.id === `call:${id}` && d.state === 'connected')
    await mine.next('call', (d) => d.call.id === id && d.call.status === 'connected')
    await s.console('POST', '/clock/advance', { ms: 6 * SEC })
    await mine.next('call', (d) => d.call.id === id && d.call.status === 'completed', 10_000)
    expect(theirs.events.filter((e) => e.event !== 'ready')).toEqual([])

    // Streams that close leave the hub; the feed is unwatched again.
    mine.close()
    theirs.close()
    await until(
      'streams gone',
      async () => hub().hub.size,
      (n) => n === 0,
    )
  }, 30_000)
})

describe('console reads', () => {
  test('workspaces to pick from, and a developer’s customers', async () => {
    const list = await s.console('GET', '/workspaces?limit=200')
    expect(list.status).toBe(200)
    expect(list.body.items.map((w: any) => w.id)).toContain(dev.id)
    expect(list.body.items.every((w: any) => w.kind === 'developer')).toBe(true)
    const customer = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })
    const customers = await s.console('GET', `/workspaces?parent=${dev.id}`)
    expect(customers.body.items.map((w: any) => w.id)).toEqual([customer.body.id])
    expect((await s.console('GET', `/workspaces/${customer.body.id}`)).body).toMatchObject({ kind: 'customer', parentId: dev.id })
    expect((await fetch(`${s.url}/console/workspaces`)).status).toBe(401)
  })

  test('calls, inbound ones too; filters; one call; its activity; ending it from the console', async () => {
    const inbound = await s.console('POST', '/sandbox/calls', { from: '+14155550799', to: '+14155550700', lines: [], hangupAfterMs: 60 * SEC })
    expect(inbound.status).toBe(201)
    const live = await until(
      'the inbound call listed live',
      () => s.console('GET', `/workspaces/${dev.id}/calls?live=true`),
      (r) => r.body.items.some((c: any) => c.direction === 'inbound'),
    )
    const call = live.body.items.find((c: any) => c.direction === 'inbound')
    expect(call).toMatchObject({ status: 'connected', phone: '+14155550799', surface: 'phone' })
    expect((await s.console('GET', `/workspaces/${dev.id}/calls?direction=outbound`)).body.items.every((c: any) => c.direction === 'outbound')).toBe(true)
    expect((await s.console('GET', `/workspaces/${dev.id}/calls?phone=%2B14155550799`)).body.items.map((c: any) => c.id)).toEqual([call.id])
    expect((await s.console('GET', `/workspaces/${dev.id}/calls?since=2000-01-01&until=2000-01-02`)).body.items).toEqual([])
    expect((await s.console('GET', `/workspaces/${dev.id}/calls?status=nope`)).status).toBe(400)
    expect((await s.console('GET', `/workspaces/${dev.id}/calls?since=2026-13-45`)).body).toMatchObject({ field: 'since' })
    // The version the call talks with is recorded once its media is live.
    const one = await until(
      "the call's version recorded",
      () => s.console('GET', `/workspaces/${dev.id}/calls/${call.id}`),
      (r) => r.body.media === 'live',
    )
    expect(one.body).toMatchObject({ id: call.id, tryId: `${call.id}:1`, latencyTurns: [], agentVersion: 1 })
    const other = await s.developer()
    expect((await s.console('GET', `/workspaces/${other.id}/calls/${call.id}`)).status).toBe(404)

    const ended = await s.console('DELETE', `/workspaces/${dev.id}/calls/${call.id}`)
    expect(ended.status).toBe(200)
    expect(ended.body.status).toBe('completed')
    expect((await s.console('DELETE', `/workspaces/${dev.id}/calls/${call.id}`)).status).toBe(409)
    const activity = await until(
      'its events',
      () => s.console('GET', `/workspaces/${dev.id}/calls/${call.id}/activity`),
      (r) => r.body.events.some((e: any) => e.type === 'call.completed'),
    )
    expect(activity.body.deliveries).toEqual([])
    // Its voice conversation is over with it: resolved (nobody left on the line to take over from).
    const conversation = one.body.conversationId as string
    expect(conversation).toStartWith('conv_')
    await until(
      'the voice conversation resolved',
      () => s.console('GET', `/workspaces/${dev.id}/conversations/${conversation}`),
      (r) => r.body.status === 'resolved',
    )
  })

  test('conversations across channels, by status; messages; campaigns; charts as graphs', async () => {
    const made = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'web', from: 'visitor-1', text: 'Hello?' })
    expect(made.status).toBe(201)
    const id = made.body.conversationId
    const all = await s.console('GET', `/workspaces/${dev.id}/conversations`)
    expect(all.body.items.map((c: any) => c.id)).toContain(id)
    await s.console('POST', `/workspaces/${dev.id}/conversations/${id}/takeover`)
    const handled = await s.console('GET', `/workspaces/${dev.id}/conversations?status=handled&channel=web`)
    expect(handled.body.items.map((c: any) => c.id)).toEqual([id])
    expect((await s.console('GET', `/workspaces/${dev.id}/conversations?status=resolved&channel=web`)).body.items).toEqual([])
    const messages = await s.console('GET', `/workspaces/${dev.id}/conversations/${id}/messages`)
    expect(messages.body.items.at(-1)).toMatchObject({ author: 'customer', parts: [{ type: 'text', text: 'Hello?' }] })
    expect((await s.console('GET', `/workspaces/${dev.id}/campaigns`)).body).toEqual({ items: [], nextCursor: null })
    const chart = await s.console('GET', '/app/charts/campaign')
    expect(chart.status).toBe(200)
    expect(chart.body.nodes.length).toBeGreaterThan(2)
    expect((await s.console('GET', '/app/charts/nope')).status).toBe(404)
  })

  test("campaigns: one campaign, its recipients in order with each one's outcome, the console's moves, the agents to pick", async () => {
    const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, { agent, name: 'Reads', kind: 'voice', purpose: 'Hi from Ring.', recipients: ['+14155550701', '+14155550798'] })
    expect(made.status).toBe(201)
    const id = made.body.id as string
    expect((await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}`)).body).toMatchObject({ id, kind: 'voice', status: 'draft', counts: { recipients: 2 } })
    const all = await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}/recipients`)
    expect(all.body).toEqual({
      items: [
        { index: 0, phone: '+14155550701', status: 'pending', error: null, errorCode: null, sentAt: null, callId: null, call: null },
        { index: 1, phone: '+14155550798', status: 'pending', error: null, errorCode: null, sentAt: null, callId: null, call: null },
      ],
      nextCursor: null,
    })
    // A page at a time, in the order given.
    const first = await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}/recipients?limit=1`)
    expect(first.body.items.map((r: any) => r.index)).toEqual([0])
    const second = await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}/recipients?limit=1&cursor=${first.body.nextCursor}`)
    expect(second.body.items.map((r: any) => r.index)).toEqual([1])
    expect((await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}/recipients?cursor=abc`)).body).toMatchObject({ field: 'cursor' })
    expect((await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}/recipients?status=failed`)).body.items).toEqual([])
    expect((await s.console('GET', `/workspaces/${dev.id}/campaigns/${id}/recipients?status=nope`)).status).toBe(400)
    const other = await s.developer()
    expect((await s.console('GET', `/workspaces/${other.id}/campaigns/${id}/recipients`)).status).toBe(404)
    // Pause, resume and cancel under the console token: 409 naming the state when the move does not apply.
    const pause = await s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/pause`)
    expect(pause.status).toBe(409)
    expect(pause.body.state).toBe('draft')
    expect((await s.console('POST', `/workspaces/${other.id}/campaigns/${id}/cancel`)).status).toBe(404)
    const cancel = await s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/cancel`)
    expect(cancel.status).toBe(200)
    expect(cancel.body.status).toBe('cancelled')
    expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${id}/resume`)).status).toBe(409)
    expect((await s.console('GET', `/workspaces/${dev.id}/agents`)).body.items).toContainEqual(expect.objectContaining({ id: agent, name: 'Ring' }))
  })

  test("inbox rows: who the customer is, the newest message, and the chat app's 24-hour window", async () => {
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550702', name: 'Ada Lovelace', email: 'ada@example.com' })).status).toBe(201)
    expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550710', source: 'rented', channel: 'chatapp', agent })).status).toBe(201)
    const made = await s.console('POST', `/workspaces/${dev.id}/inbound`, { channel: 'chatapp', from: '+14155550702', to: '+14155550710', text: 'Is the Sunday roast on?' })
    expect(made.status).toBe(201)
    const id = made.body.conversationId as string
    const row = async () => (await s.console('GET', `/workspaces/${dev.id}/conversations?channel=chatapp`)).body.items.find((c: any) => c.id === id)
    const first = await row()
    expect(first.who).toEqual({ label: 'Ada Lovelace', name: 'Ada Lovelace', phone: '+14155550702', email: 'ada@example.com' })
    // The preview is the newest public message, whoever wrote it (the agent may have answered already).
    const newest = (await s.console('GET', `/workspaces/${dev.id}/conversations/${id}/messages?limit=1`)).body.items[0]
    const fresh = await row()
    expect(fresh.lastMessage).toEqual({ author: newest.author, text: newest.parts[0].text, at: newest.createdAt })
    const closesAt = new Date(Date.parse(fresh.lastInboundAt) + 24 * 3600 * SEC).toISOString()
    expect(fresh.replyWindow).toEqual({ open: true, closesAt })
    // A visitor on the website has no contact: a short form of their id, never the same words for all.
    const web = (await s.console('GET', `/workspaces/${dev.id}/conversations?channel=web`)).body.items[0]
    expect(web.who.label).toBe('Website visitor visitor-1')
    expect(web.replyWindow).toBeNull()
    // A day and an hour later the window is shut, on the service's clock; the one-conversation read says so too.
    expect((await s.console('POST', '/clock/advance', { ms: 25 * 3600 * SEC })).status).toBe(200)
    expect((await row()).replyWindow).toEqual({ open: false, closesAt })
    expect((await s.console('GET', `/workspaces/${dev.id}/conversations/${id}`)).body.replyWindow).toEqual({ open: false, closesAt })
  })
})
