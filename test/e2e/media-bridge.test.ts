/**
 * The media bridge's protocol, driven by hand as a Twilio Media Streams client would (the `ws`
 * package against the running server): a refused token, an unknown call, a call that is not live,
 * no `start` in time is not tested here (10 s), malformed / oversized / out-of-order / binary
 * messages after `start` ending the call `failed` with the reason and its transcript kept, a
 * socket that dies mid-call, and a good stream that gets the agent's purpose as media + marks.
 * Other calls on the server are undisturbed throughout.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import WebSocket from 'ws'
import { callsFeature } from '../../src/features/calls'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
let n = 0
/** The sandbox's media hook-up, taken off the network for this file: the test is every callee. */
let media: { token(callId: string, attempt: number): string }

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'scale', name: 'Bridge' })
  const agent = (await s.agent(dev.key, { name: 'Bridge', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550700', source: 'rented', agent })).status).toBe(201)
  const { sandbox } = s.server.services.of(callsFeature)
  const attached = sandbox.detachMedia()
  if (!attached) throw new Error('the sandbox network has no media hook-up to take off')
  media = attached
})
afterAll(() => s?.stop())

/** A connected call whose callee does not connect (so this test drives the socket itself). */
async function liveCall(): Promise<{ id: string; token: string }> {
  const phone = `+1415555${String(710 + n++).padStart(4, '0')}`
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, hangupAfterMs: null })).status).toBe(200)
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: phone, purpose: 'Hello, this is a protocol test.' } })
  await until(
    'connected',
    () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  return { id: placed.body.id, token: media.token(placed.body.id, 1) }
}

interface Client {
  ws: WebSocket
  received: any[]
  closed: Promise<{ code: number; reason: string }>
  send(m: unknown): void
}

async function connect(path: string): Promise<Client> {
  const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}${path}`)
  const received: any[] = []
  ws.on('message', (d) => {
    const m = JSON.parse(String(d))
    received.push(m)
    // Like Twilio once the audio before it has played (at once here: nothing is played).
    if (m.event === 'mark' && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ event: 'mark', sequenceNumber: '0', streamSid: m.streamSid, mark: m.mark }))
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return { ws, received, closed, send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)) }
}

const start = (streamSid = 'MZtest', customParameters: Record<string, string> = {}) => ({
  event: 'start',
  sequenceNumber: '1',
  start: { streamSid, accountSid: 'AC1', callSid: 'CA1', tracks: ['inbound'], customParameters, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
  streamSid,
})
const silence = (chunk: number) => ({
  event: 'media',
  sequenceNumber: String(chunk + 1),
  media: { track: 'inbound', chunk: String(chunk), timestamp: String(chunk * 20), payload: Buffer.alloc(160, 0xff).toString('base64') },
  streamSid: 'MZtest',
})
const call = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key }).then((r) => r.body)

describe('refusals before the stream starts (the call is untouched)', () => {
  test('a bad token closes 4401; the call stays connected', async () => {
    const { id } = await liveCall()
    const c = await connect(`/media/${id}/not-the-token`)
    c.send({ event: 'connected', protocol: 'Call', version: '1.0.0' })
    c.send(start())
    expect((await c.closed).code).toBe(4401)
    expect((await call(id)).status).toBe('connected')
  })

  test('the token as a TwiML <Parameter> works; a wrong one there is refused too', async () => {
    const { id, token } = await liveCall()
    const bad = await connect(`/media/${id}`)
    bad.send(start('MZa', { token: 'x' }))
    expect((await bad.closed).code).toBe(4401)
    const good = await connect(`/media/${id}`)
    good.send(start('MZb', { token }))
    await until(
      'the purpose is spoken',
      async () => good.received,
      (r) => r.some((m) => m.event === 'media'),
      5_000,
    )
    good.ws.close()
  })

  test('an unknown call closes 4404; an ended call 4409', async () => {
    const unknown = await connect('/media/out_nope/abc')
    unknown.send(start())
    expect((await unknown.closed).code).toBe(4404)
    const { id, token } = await liveCall()
    expect((await s.api('DELETE', `/calls/${id}`, { key: dev.key })).status).toBe(202)
    const late = await connect(`/media/${id}/${token}`)
    late.send(start())
    expect((await late.closed).code).toBe(4409)
  })

  test("a WebRTC offer is refused with the close code's HTTP status: 404 unknown, 401 bad token, 409 not live", async () => {
    const offer = (path: string) => fetch(`${s.url}${path}/webrtc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sdp: 'v=0' }) })
    expect((await offer('/media/out_nope/abc')).status).toBe(404)
    const { id, token } = await liveCall()
    const bad = await offer(`/media/${id}/not-the-token`)
    expect(bad.status).toBe(401)
    expect((await bad.json()).error).toBe('the media token does not verify')
    // Past the refusals, the offer itself is read (and this one is no SDP).
    expect((await offer(`/media/${id}/${token}`)).status).toBe(400)
    expect((await s.api('DELETE', `/calls/${id}`, { key: dev.key })).status).toBe(202)
    const ended = await offer(`/media/${id}/${token}`)
    expect(ended.status).toBe(409)
    expect((await ended.json()).error).toContain('not connected')
  })

  test('garbage before start closes with 1002 and touches no call', async () => {
    const { id, token } = await liveCall()
    const c = await connect(`/media/${id}/${token}`)
    c.send('this is not json')
    expect((await c.closed).code).toBe(1002)
    expect((await call(id)).status).toBe('connected')
  })
})

describe('a live stream', () => {
  test('gets the purpose as paced media, each chunk followed by a mark, on its streamSid', async () => {
    const { id, token } = await liveCall()
    const c = await connect(`/media/${id}/${token}`)
    c.send({ event: 'connected', protocol: 'Call', version: '1.0.0' })
    c.send(start())
    await until(
      'media and marks',
      async () => c.received,
      (r) => r.filter((m) => m.event === 'mark').length >= 3,
      5_000,
    )
    const first = c.received.slice(0, 4)
    expect(first[0]).toMatchObject({ event: 'media', streamSid: 'MZtest' })
    expect(Buffer.from(first[0].media.payload, 'base64').length).toBe(800) // 100 ms of mu-law
    expect(first[1]).toMatchObject({ event: 'mark', streamSid: 'MZtest', mark: { name: expect.any(String) } })
    c.send({ event: 'stop', sequenceNumber: '9', streamSid: 'MZtest', stop: { accountSid: 'AC1', callSid: 'CA1' } })
    expect((await c.closed).code).toBe(1000)
    const ended = await until(
      'ended',
      () => call(id),
      (r) => r.status === 'completed',
    )
    expect(ended.hangup).toBe('answered')
  })

  const breaks: [string, (c: Client) => void, RegExp][] = [
    ['malformed JSON', (c) => c.send('{"event": "media", '), /not JSON/],
    ['an unknown event', (c) => c.send({ event: 'dance' }), /unknown event/],
    ['a media payload that is not base64', (c) => c.send({ event: 'media', media: { payload: '***' }, streamSid: 'MZtest' }), /base64/],
    ['a second start', (c) => c.send(start()), /second "start"/],
    ['a binary frame', (c) => c.ws.send(Buffer.from([1, 2, 3])), /binary/],
    ['a bad DTMF digit', (c) => c.send({ event: 'dtmf', dtmf: { track: 'inbound_track', digit: 'Z' }, streamSid: 'MZtest' }), /dtmf/],
  ]
  for (const [what, breakIt, reason] of breaks) {
    test(`${what}: the call ends failed with the reason; the transcript so far is kept`, async () => {
      const { id, token } = await liveCall()
      const other = await liveCall()
      const c = await connect(`/media/${id}/${token}`)
      c.send(start())
      for (let i = 1; i <= 5; i++) c.send(silence(i))
      // The agent's line is written as it is heard; wait for the whole of it.
      await until(
        'the purpose in the transcript',
        () => call(id),
        (r) => r.transcript[0]?.text === 'Hello, this is a protocol test.',
        5_000,
      )
      breakIt(c)
      expect((await c.closed).code).toBeOneOf([1002, 1009])
      const ended = await until(
        'failed',
        () => call(id),
        (r) => r.status === 'completed',
        5_000,
      )
      expect(ended.hangup).toBe('failed')
      expect(ended.error).toMatch(reason)
      expect(ended.transcript[0]).toMatchObject({ speaker: 'agent', text: 'Hello, this is a protocol test.' })
      expect((await call(other.id)).status).toBe('connected')
    })
  }

  test('late or repeated audio chunks are dropped, not fatal', async () => {
    const { id, token } = await liveCall()
    const c = await connect(`/media/${id}/${token}`)
    c.send(start())
    for (const i of [1, 2, 3, 2, 1, 4]) c.send(silence(i))
    await Bun.sleep(200)
    expect(c.ws.readyState).toBe(WebSocket.OPEN)
    expect((await call(id)).status).toBe('connected')
    c.ws.close()
  })

  test('an oversized message closes 1009 and ends the call failed', async () => {
    const { id, token } = await liveCall()
    const c = await connect(`/media/${id}/${token}`)
    c.send(start())
    await Bun.sleep(50)
    c.send({ event: 'media', media: { payload: 'A'.repeat(70_000) }, streamSid: 'MZtest' })
    expect((await c.closed).code).toBe(1009)
    const ended = await until(
      'failed',
      () => call(id),
      (r) => r.status === 'completed',
      5_000,
    )
    expect(ended.hangup).toBe('failed')
  })

  test('a socket that dies mid-call ends the call failed ("lost"), transcript kept', async () => {
    const { id, token } = await liveCall()
    const c = await connect(`/media/${id}/${token}`)
    c.send(start())
    await until(
      'the purpose in the transcript',
      () => call(id),
      (r) => r.transcript.length > 0,
      5_000,
    )
    c.ws.terminate()
    const ended = await until(
      'failed',
      () => call(id),
      (r) => r.status === 'completed',
      5_000,
    )
    expect(ended).toMatchObject({ hangup: 'failed' })
    expect(ended.error).toMatch(/lost/)
    expect(ended.transcript).toHaveLength(1) // the purpose, said before the socket went
  })
})
