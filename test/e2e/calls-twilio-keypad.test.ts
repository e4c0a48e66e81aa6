/**
 * The keypad and voicemail on TELEPHONY_PROVIDER=twilio, end to end against the local fake of
 * Twilio's REST API and a Media Streams client signed as Twilio signs: keys arrive as the stream's
 * `dtmf` messages and reach the transcript; a voicemail-dropping agent places its call with
 * asynchronous message-end detection, says nothing until the verdict, and on `machine_end_beep`
 * streams its message and ends the call at Twilio.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { TwilioFake } from '../fakes/twilio'
import type { TestServer } from '../support/server'
import { openStream, startTwilioServer, type TwilioServer } from '../support/twilio-server'
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
})
afterAll(async () => {
  await twilio?.stop()
})

/** The call's Media Streams socket, opened as Twilio opens it; `received` collects what the service sends. */
async function stream(id: string, sid: string) {
  const streamSid = `MZ${id.slice(-8)}`
  // Played at once: each mark comes back.
  const { socket, received } = await openStream(fake, sid, streamSid, { echoMarks: true })
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
  const agent = await phoneAgent('+14155551800', '+14155551801')
  const placed = await s.api('POST', '/calls', { key, body: { to: '+14155551801', purpose: 'Please key in your account number.', agent } })
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

test('voicemail drop: DetectMessageEnd with AsyncAmd; silent until the verdict; the message, then Status=completed', async () => {
  const agent = await phoneAgent('+14155551810', '+14155551811', { detectMachines: true, voicemailMessage: 'Hi {{name}}, Sunrise Dental here. Please call us back.' })
  await s.console('POST', `/workspaces/${ws}/contacts`, { phone: '+14155551812', name: 'Sam' })
  const placed = await s.api('POST', '/calls', { key, body: { to: '+14155551811', purpose: 'Hello, calling about your cleaning.', agent } })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  const sent = fake.calls.at(-1)!
  // The exact REST parameters (Twilio's answering-machine detection docs).
  expect(sent.form.get('MachineDetection')).toBe('DetectMessageEnd')
  expect(sent.form.get('AsyncAmd')).toBe('true')
  expect(sent.form.get('AsyncAmdStatusCallback')).toBe(`${s.url}/telephony/twilio/amd?call=${encodeURIComponent(id)}&attempt=1`)
  expect(sent.form.get('AsyncAmdStatusCallbackMethod')).toBe('POST')
  await fake.callback(sent.sid, { CallStatus: 'in-progress' })
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
  )
  const line = await stream(id, sent.sid)
  // An unsigned verdict is refused and changes nothing.
  expect(await fake.amd(sent.sid, { AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '4100' }, { badSignature: true })).toBe(403)
  await until(
    'the stream is live',
    () => call(id),
    (r) => r.body.status === 'connected',
  )
  expect(await fake.amd(sent.sid, { AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '4100' })).toBe(204)
  const done = await until(
    'ended voicemail',
    () => call(id),
    (r) => r.body.status === 'completed',
    20_000,
  )
  expect(done.body.hangup).toBe('voicemail')
  expect(done.body.transcript.map((l: any) => [l.speaker, l.text])).toEqual([['agent', 'Hi, Sunrise Dental here. Please call us back.']])
  // Nothing was streamed before the verdict but the message (the opening never played), and the call was ended at Twilio.
  expect(line.received.some((m) => m.event === 'media')).toBe(true)
  await until(
    'hung up at Twilio',
    async () => sent.updates,
    (u) => u.includes('completed'),
  )
  line.socket.close()
}, 40_000)

test('voicemail drop: a person (AnsweredBy human) hears the opening', async () => {
  const agent = (await s.api('GET', '/agents?limit=100', { key })).body.items.find((a: any) => a.voice.voicemailMessage).id
  const placed = await s.api('POST', '/calls', { key, body: { to: '+14155551812', purpose: 'Hello Sam, calling about your cleaning.', agent } })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  const sent = fake.calls.at(-1)!
  expect(sent.form.get('MachineDetection')).toBe('DetectMessageEnd')
  await fake.callback(sent.sid, { CallStatus: 'in-progress' })
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
  )
  // The verdict may come before the stream opens: the session reads it when it starts.
  expect(await fake.amd(sent.sid, { AnsweredBy: 'human', MachineDetectionDuration: '1800' })).toBe(204)
  const line = await stream(id, sent.sid)
  const spoke = await until(
    'the opening',
    () => call(id),
    (r) => (r.body.transcript ?? []).some((l: any) => l.text === 'Hello Sam, calling about your cleaning.'),
    15_000,
  )
  expect(spoke.body.transcript.map((l: any) => l.speaker)).toEqual(['agent'])
  line.socket.close()
}, 40_000)
