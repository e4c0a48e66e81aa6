/**
 * Calls on TELEPHONY_PROVIDER=twilio, end to end: the real server places calls through a local fake
 * of Twilio's REST API (TWILIO_API_BASE_URL), hears Twilio's signed status callbacks on its public
 * URL, refuses a callback with a bad signature, ends a live call through the API, and answers an
 * incoming call with TwiML that streams it to the media bridge.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { twilioSignature } from '../../src/providers/telephony/twilio-signature'
import type { TwilioFake } from '../fakes/twilio'
import type { TestServer } from '../support/server'
import { startTwilioServer, streamOf, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

let twilio: TwilioServer
let fake: TwilioFake
let s: TestServer
let key: string
let ws: string

const call = (id: string) => s.api('GET', `/calls/${id}`, { key })

beforeAll(async () => {
  twilio = await startTwilioServer()
  ;({ fake, s } = twilio)
  const dev = await s.developer({ plan: 'pro' })
  key = dev.key
  ws = dev.id
  const agent = (await s.agent(key, { name: 'Caller', voice: { answersCalls: true, detectMachines: true } })).id
  await s.console('POST', `/workspaces/${ws}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })
  for (const phone of ['+14155550901', '+14155550902', '+14155550903']) await s.console('POST', `/workspaces/${ws}/contacts`, { phone })
})
afterAll(async () => {
  await twilio?.stop()
})

test('placed through Twilio; signed callbacks move it; a bad signature is refused', async () => {
  const placed = await s.api('POST', '/calls', { key, body: { to: '+14155550901', purpose: 'Hello from Twilio' } })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  const sent = fake.calls.at(-1)!
  expect(sent.form.get('To')).toBe('+14155550901')
  expect(sent.form.get('From')).toBe('+14155550900')
  expect(sent.form.get('MachineDetection')).toBe('Enable')
  expect(sent.form.get('Twiml')).toContain(`/media/${id}`)
  expect((await call(id)).body.callRef).toBe(sent.sid)
  expect(await fake.callback(sent.sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })).toBe(204)
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
  )
  expect(await fake.callback(sent.sid, { CallStatus: 'completed', CallDuration: '30' }, { badSignature: true })).toBe(403)
  expect((await call(id)).body.status).toBe('connected')
  await s.console('POST', '/clock/advance', { ms: 30_000 })
  expect(await fake.callback(sent.sid, { CallStatus: 'completed', CallDuration: '30' })).toBe(204)
  const done = await until(
    'analysed',
    () => call(id),
    (r) => r.body.analysedAt !== null,
  )
  expect(done.body).toMatchObject({ status: 'completed', hangup: 'answered', seconds: 30 })
})

test("Twilio's refusal is a 502 with the call recorded failed; DELETE of a live call hangs up at Twilio", async () => {
  fake.refuse.add('+14155550902')
  const refused = await s.api('POST', '/calls', { key, body: { to: '+14155550902', purpose: 'Hi' } })
  expect(refused.status).toBe(502)
  expect(refused.body.error).toContain('not a valid phone number')
  expect((await call(refused.body.id)).body).toMatchObject({ status: 'failed', hangup: 'failed' })

  const live = (await s.api('POST', '/calls', { key, body: { to: '+14155550903', purpose: 'Hi' } })).body.id
  const sid = fake.calls.at(-1)!.sid
  await fake.callback(sid, { CallStatus: 'in-progress' })
  await until(
    'connected',
    () => call(live),
    (r) => r.body.status === 'connected',
  )
  expect((await s.api('DELETE', `/calls/${live}`, { key })).status).toBe(202)
  await until(
    'hung up at Twilio',
    async () => fake.calls.find((c) => c.sid === sid)!.updates,
    (u) => u.includes('completed'),
  )
})

test('an incoming call is answered with TwiML streaming it to the bridge; an unsigned one is refused', async () => {
  const url = `${s.url}/telephony/twilio/voice`
  const params = { CallSid: 'CA0123456789abcdef0123456789abcdef', AccountSid: fake.accountSid, From: '+14155550988', To: '+14155550900', CallStatus: 'ringing', Direction: 'inbound' }
  const signed = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(fake.authToken, url, params) },
    body: new URLSearchParams(params),
  })
  expect(signed.status).toBe(200)
  expect(signed.headers.get('content-type')).toContain('text/xml')
  const twiml = await signed.text()
  expect(twiml).toMatch(/<Connect><Stream url="ws:\/\/127\.0\.0\.1:\d+\/media\/in_[0-9a-z]+">/)
  const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) })
  expect(unsigned.status).toBe(403)
})

test("Twilio's media stream: the TwiML names /media/{id} with the token as a <Parameter>; the upgrade must carry X-Twilio-Signature", async () => {
  const { twilioSignature } = await import('../../src/providers/telephony/twilio-signature')
  const WebSocket = (await import('ws')).default
  await s.console('POST', `/workspaces/${ws}/contacts`, { phone: '+14155550904' })
  const placed = await s.api('POST', '/calls', { key, body: { to: '+14155550904', purpose: 'Hello over the stream.' } })
  const id = placed.body.id
  const sent = fake.calls.at(-1)!
  const { wsUrl, token } = streamOf(fake, sent.sid)
  expect(wsUrl).toBe(`${s.url.replace(/^http/, 'ws')}/media/${id}`)
  expect(token.length).toBe(32)
  await fake.callback(sent.sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
  )

  // Unsigned: the upgrade is refused (403), nothing reaches the call.
  const unsigned = new WebSocket(wsUrl)
  const refused = await new Promise<number>((resolve) => unsigned.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)))
  expect(refused).toBe(403)

  // Signed as Twilio signs a stream: HMAC-SHA1 of the wss:// URL, no parameters.
  const signed = new WebSocket(wsUrl, { headers: { 'x-twilio-signature': twilioSignature(fake.authToken, wsUrl, {}) } })
  const received: any[] = []
  signed.on('message', (d) => received.push(JSON.parse(String(d))))
  await new Promise((resolve) => signed.once('open', resolve))
  signed.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }))
  signed.send(
    JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      start: {
        streamSid: 'MZ1',
        accountSid: fake.accountSid,
        callSid: sent.sid,
        tracks: ['inbound'],
        customParameters: { token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid: 'MZ1',
    }),
  )
  await until(
    'the purpose streams',
    async () => received,
    (r) => r.some((m) => m.event === 'media' && m.streamSid === 'MZ1'),
    5_000,
  )
  signed.close()
})
