/**
 * The keypad and voicemail on TELEPHONY_PROVIDER=twilio, end to end against the local fake of
 * Twilio's REST API and a Media Streams client signed as Twilio signs: keys arrive as the stream's
 * `dtmf` messages and reach the transcript.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import WebSocket from 'ws'
import { twilioSignature } from '../../src/providers/telephony/twilio-signature'
import { startTwilioFake, streamOpening, type TwilioFake } from '../fakes/twilio'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let fake: TwilioFake
let s: TestServer
let key: string
let ws: string

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

const call = (id: string) => s.api('GET', `/calls/${id}`, { key })

beforeAll(async () => {
  fake = startTwilioFake()
  const port = await freePort()
  s = await startTestServer({
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: fake.accountSid,
    TWILIO_AUTH_TOKEN: fake.authToken,
    TWILIO_API_BASE_URL: fake.url,
  })
  const dev = await s.developer({ plan: 'pro' })
  key = dev.key
  ws = dev.id
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

/** The call's Media Streams socket, opened as Twilio opens it; `received` collects what the service sends. */
async function stream(id: string, sid: string) {
  const twiml = fake.calls.find((c) => c.sid === sid)!.form.get('Twiml')!
  const url = /<Stream url="([^"]+)"/.exec(twiml)![1]!
  const token = /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)![1]!
  const socket = new WebSocket(url, { headers: { 'x-twilio-signature': twilioSignature(fake.authToken, url, {}) } })
  const received: any[] = []
  socket.on('message', (d) => received.push(JSON.parse(String(d))))
  await new Promise((resolve) => socket.once('open', resolve))
  const streamSid = `MZ${id.slice(-8)}`
  for (const m of streamOpening({ streamSid, accountSid: fake.accountSid, callSid: sid, token })) socket.send(m)
  let seq = 2
  const send = (m: object) => socket.send(JSON.stringify({ ...m, streamSid, sequenceNumber: String(seq++) }))
  return { socket, received, send }
}

async function phoneAgent(number: string, contact: string, voice: Record<string, unknown> = {}) {
  const agent = (await s.agent(key, { name: 'Billing', voice: { answersCalls: true, ...voice } })).id
  await s.console('POST', `/workspaces/${ws}/phone-numbers`, { number, source: 'rented', agent })
  await s.console('POST', `/workspaces/${ws}/contacts`, { phone: contact })
  return agent
}

test("keys arrive as the stream's dtmf messages: one sequence, ended by #, in the transcript", async () => {
  await phoneAgent('+14155551800', '+14155551801')
  const placed = await s.api('POST', '/calls', { key, body: { to: '+14155551801', purpose: 'Please key in your account number.' } })
  const id = placed.body.id
  const sid = fake.calls.at(-1)!.sid
  await fake.callback(sid, { CallStatus: 'in-progress' })
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
  )
  const line = await stream(id, sid)
  await until(
    'the opening streams',
    async () => line.received,
    (r) => r.some((m) => m.event === 'media'),
  )
  // Twilio's dtmf message (docs: event, streamSid, sequenceNumber, dtmf.track inbound_track, dtmf.digit).
  for (const digit of ['4', '2', '#']) line.send({ event: 'dtmf', dtmf: { track: 'inbound_track', digit } })
  const answered = await until(
    'the keys in the transcript',
    () => call(id),
    (r) => (r.body.transcript ?? []).some((l: any) => l.speaker === 'customer'),
    10_000,
  )
  expect(answered.body.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)).toEqual(['[keypad] 42#'])
  line.socket.close()
})
