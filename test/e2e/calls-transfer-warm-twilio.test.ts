/**
 * Warm transfer on TELEPHONY_PROVIDER=twilio against the local fake of Twilio's REST API: the
 * person is called on a second call (`POST Calls.json`, the exact form and TwiML: the brief `<Say>`
 * inside a one-key `<Gather>`), its signed status callback says they answered, its `<Gather>`
 * action with Digits=1 is answered with the `<Conference>` and the caller's live call is updated to
 * join it (the exact TwiML); the stream Twilio then stops is not the call's end; the leg's
 * `completed` bills its seconds and the caller's `<Dial action>` is answered `<Hangup/>`. A leg
 * nobody answers (`no-answer`) and one whose person presses no key (declined) leave the call
 * connected, and the agent tells the caller on its stream.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type WebSocket from 'ws'
import type { TwilioFake } from '../fakes/twilio'
import type { TestServer } from '../support/server'
import { openStream, startTwilioServer, type TwilioServer } from '../support/twilio-server'
import { until } from '../support/until'

let twilio: TwilioServer
let fake: TwilioFake
let s: TestServer
let key: string
const MANAGER = '+14155550987'
const OURS = '+14155550900'
const XML = '<?xml version="1.0" encoding="UTF-8"?>'

const call = (id: string) => s.api('GET', `/calls/${id}`, { key })

beforeAll(async () => {
  twilio = await startTwilioServer()
  ;({ fake, s } = twilio)
  const dev = await s.developer({ plan: 'pro' })
  key = dev.key
  const agent = (await s.agent(key, { name: 'Desk', voice: { answersCalls: true }, transfers: [{ name: 'Manager', phoneNumber: MANAGER, whenToUse: 'complaints', mode: 'warm' }] })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: OURS, source: 'rented', agent })
  for (const phone of ['+14155550921', '+14155550922', '+14155550923']) await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
})
afterAll(async () => {
  await twilio?.stop()
})

/** Places a call through the fake, has Twilio answer it and opens its media stream as Twilio would. */
async function connected(to: string): Promise<{ id: string; sid: string; stream: WebSocket }> {
  const id = (await s.api('POST', '/calls', { key, body: { to, purpose: 'Hello, this is the desk.' } })).body.id
  const sid = fake.calls.at(-1)!.sid
  expect(await fake.callback(sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })).toBe(204)
  // Twilio echoes each mark once the audio before it has played: the agent's words count as heard.
  const { socket: stream } = await openStream(fake, sid, `MZ${sid.slice(-6)}`, { echoMarks: true })
  await until(
    'the agent spoke',
    () => call(id),
    (r) => r.body.status === 'connected' && r.body.transcript.length > 0,
    10_000,
  )
  return { id, sid, stream }
}

/** The person's leg the transfer placed. */
async function legOf(id: string) {
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key, body: { destination: 'Manager' } })
  expect(asked.status).toBe(202)
  expect(asked.body).toMatchObject({ status: 'connected', transfer: { to: 'Manager', mode: 'warm', by: 'api', outcome: null } })
  const leg = fake.calls.at(-1)!
  expect(leg.form.get('To')).toBe(MANAGER)
  return leg
}

test("the person is called and briefed, presses 1, and both legs meet in a conference; the leg's seconds are billed", async () => {
  const { id, sid, stream } = await connected('+14155550921')
  const leg = await legOf(id)
  const warm = `${s.url}/telephony/twilio/warm`
  const q = `call=${id}&amp;attempt=1`
  // The exact placement of the second call: from our number, rung as long as a cold <Dial>, its status to /warm/leg.
  expect(Object.fromEntries([...leg.form.keys()].map((k) => [k, leg.form.getAll(k)]))).toEqual({
    To: [MANAGER],
    From: [OURS],
    Twiml: [
      `${XML}<Response><Gather action="${warm}/reply?${q}" method="POST" numDigits="1" timeout="10" actionOnEmptyResult="true">` +
        `<Say>Hello, this is Desk. I have a caller from 1 4 1 5 5 5 5 0 9 2 1 on the line for Manager. Press 1 to take the call.</Say></Gather></Response>`,
    ],
    Timeout: ['30'],
    StatusCallback: [`${warm}/leg?call=${id}&attempt=1`],
    StatusCallbackMethod: ['POST'],
    StatusCallbackEvent: ['answered', 'completed'],
  })
  expect(fake.requests.filter((r) => r.path.endsWith('/Calls.json')).at(-1)).toEqual({ method: 'POST', path: `/2010-04-01/Accounts/${fake.accountSid}/Calls.json`, authorized: true })
  // The caller is still ours meanwhile: no update of their call yet.
  expect(fake.calls.find((c) => c.sid === sid)!.twimls).toEqual([])

  expect(await fake.callback(leg.sid, { CallStatus: 'in-progress' })).toBe(204)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
  )
  const unsigned = await fetch(`${warm}/reply?call=${id}&attempt=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ CallSid: leg.sid, Digits: '1' }),
  })
  expect(unsigned.status).toBe(403)
  const room = `transfer-${id}-1`
  const conference = `<Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false" waitUrl="">${room}</Conference>`
  const taken = await fake.post(`${warm}/reply?call=${id}&attempt=1`, { CallSid: leg.sid, Digits: '1', CallStatus: 'in-progress' })
  expect(taken.status).toBe(200)
  expect(taken.headers.get('content-type')).toContain('text/xml')
  expect(await taken.text()).toBe(`${XML}<Response><Dial>${conference}</Dial></Response>`)
  // The caller's live call joins the same room; its <Dial action> tells us when it is over.
  expect(fake.calls.find((c) => c.sid === sid)!.twimls).toEqual([`${XML}<Response><Dial action="${warm}/joined?${q}" method="POST">${conference}</Dial></Response>`])

  stream.send(JSON.stringify({ event: 'stop', sequenceNumber: '99', streamSid: `MZ${sid.slice(-6)}`, stop: { accountSid: fake.accountSid, callSid: sid } }))
  stream.close()
  await until(
    'the stream is done',
    () => s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] }).then((c) => c.get(`${id}:1`)),
    (row) => row?.media === 'done',
    5_000,
  )
  expect((await call(id)).body.status).toBe('connected')
  expect(fake.calls.find((c) => c.sid === sid)!.updates).toEqual([])

  await s.console('POST', '/clock/advance', { ms: 45_000 })
  expect(await fake.callback(leg.sid, { CallStatus: 'completed', CallDuration: '45' })).toBe(204)
  const joined = await fake.post(`${warm}/joined?call=${id}&attempt=1`, { CallSid: sid, DialCallStatus: 'completed', CallStatus: 'in-progress' })
  expect(await joined.text()).toBe(`${XML}<Response><Hangup/></Response>`)
  expect(await fake.callback(sid, { CallStatus: 'completed', CallDuration: '60' })).toBe(204)
  const done = await until(
    'completed',
    () => call(id),
    (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
    10_000,
  )
  expect(done.body.hangup).toBe('answered')
  expect(done.body.transfer).toMatchObject({ mode: 'warm', outcome: 'answered', seconds: 45, error: null })
}, 30_000)

test('a leg nobody answers, then one whose person presses no key: the call stays with the agent, who says so', async () => {
  const { id, sid, stream } = await connected('+14155550922')
  const first = await legOf(id)
  expect(await fake.callback(first.sid, { CallStatus: 'no-answer' })).toBe(204)
  const missed = await until(
    'the agent says nobody answered',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes("Manager didn't pick up")),
    10_000,
  )
  expect(missed.body).toMatchObject({ status: 'connected', transfer: { outcome: 'no_answer', seconds: 0 } })

  const second = await legOf(id)
  expect(await fake.callback(second.sid, { CallStatus: 'in-progress' })).toBe(204)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
  )
  await s.console('POST', '/clock/advance', { ms: 14_000 })
  const declined = await fake.post(`${s.url}/telephony/twilio/warm/reply?call=${id}&attempt=1`, { CallSid: second.sid, Digits: '', CallStatus: 'in-progress' })
  expect(await declined.text()).toBe(`${XML}<Response><Say>Thank you. Goodbye.</Say><Hangup/></Response>`)
  const told = await until(
    'the agent says the person cannot take it',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes("Manager can't take the call right now")),
    10_000,
  )
  expect(told.body).toMatchObject({ status: 'connected', transfer: { outcome: 'declined', seconds: 14 } })
  // The declined leg's own end changes nothing more; the caller's call was never updated.
  expect(await fake.callback(second.sid, { CallStatus: 'completed', CallDuration: '16' })).toBe(204)
  expect((await call(id)).body).toMatchObject({ status: 'connected', transfer: { outcome: 'declined', seconds: 14 } })
  expect(fake.calls.find((c) => c.sid === sid)!.twimls).toEqual([])
  stream.close()
}, 30_000)

test('the caller hangs up while the person is being called: a person who then presses 1 is told the caller left, not put in a room alone', async () => {
  const { id, sid, stream } = await connected('+14155550923')
  const leg = await legOf(id)
  stream.close()
  expect(await fake.callback(sid, { CallStatus: 'completed', CallDuration: '12' })).toBe(204)
  await until(
    'the call ended',
    () => call(id),
    (r) => r.body.status === 'completed',
    10_000,
  )
  const pressed = await fake.post(`${s.url}/telephony/twilio/warm/reply?call=${id}&attempt=1`, { CallSid: leg.sid, Digits: '1', CallStatus: 'in-progress' })
  expect(pressed.status).toBe(200)
  expect(await pressed.text()).toBe(`${XML}<Response><Say>Sorry, the caller has already left. Goodbye.</Say><Hangup/></Response>`)
  // Nobody tried to join the caller's finished call to a conference.
  expect(fake.calls.find((c) => c.sid === sid)!.twimls).toEqual([])
}, 30_000)
