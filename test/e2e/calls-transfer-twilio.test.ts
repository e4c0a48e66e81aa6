/**
 * Cold transfer on TELEPHONY_PROVIDER=twilio against the local fake of Twilio's REST API: the
 * live call is updated with `<Dial>` TwiML (the exact document), the media stream Twilio then
 * stops is not the call's end (no hang-up is sent), the `<Number>`'s signed status callback says
 * the person answered, the `<Dial action>` says how the leg ended and is answered `<Hangup/>`,
 * and the parent call's `completed` ends the call `hangup: answered` with the leg on the record.
 * A Dial nobody answers is `no_answer`; an update Twilio refuses is a 502 and the call goes on.
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
const BILLING = '+14155550977'
const OURS = '+14155550900'

const call = (id: string) => s.api('GET', `/calls/${id}`, { key })

beforeAll(async () => {
  twilio = await startTwilioServer()
  ;({ fake, s } = twilio)
  const dev = await s.developer({ plan: 'pro' })
  key = dev.key
  const agent = (await s.agent(key, { name: 'Desk', voice: { answersCalls: true }, transfers: [{ name: 'Billing', phoneNumber: BILLING, whenToUse: 'bills and refunds' }] })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: OURS, source: 'rented', agent })
  for (const phone of ['+14155550911', '+14155550912', '+14155550913']) await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
})
afterAll(async () => {
  await twilio?.stop()
})

/** Places a call through the fake and has Twilio answer it. */
async function connected(to: string): Promise<{ id: string; sid: string }> {
  const id = (await s.api('POST', '/calls', { key, body: { to, purpose: 'Hello, this is the desk.' } })).body.id
  const sid = fake.calls.at(-1)!.sid
  expect(await fake.callback(sid, { CallStatus: 'in-progress', AnsweredBy: 'human' })).toBe(204)
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
  )
  return { id, sid }
}

const expectedTwiml = (id: string) => {
  const base = `${s.url}/telephony/twilio/transfer`
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="${base}/ended?call=${id}&amp;attempt=1" method="POST" timeout="30" callerId="${OURS}">` +
    `<Number statusCallbackEvent="answered" statusCallback="${base}/answered?call=${id}&amp;attempt=1" statusCallbackMethod="POST">${BILLING}</Number></Dial></Response>`
  )
}

test('the live call is updated with <Dial>; the stream it stops is not the end; the callbacks record the leg and the call ends answered', async () => {
  const { id, sid } = await connected('+14155550911')
  // The call's media stream, as Twilio opens it (signed upgrade, the token in the TwiML).
  const { socket: stream, received: heard } = await openStream(fake, sid, 'MZ1', { echoMarks: false })
  await until(
    'the agent speaks',
    async () => heard,
    (h) => h.some((m) => m.event === 'media'),
    5_000,
  )

  const asked = await s.api('POST', `/calls/${id}/transfer`, { key, body: { destination: 'Billing' } })
  expect(asked.status).toBe(202)
  expect(asked.body).toMatchObject({ status: 'connected', transfer: { to: 'Billing', phoneNumber: BILLING, by: 'api', outcome: null } })
  const updated = fake.calls.find((c) => c.sid === sid)!
  expect(updated.twimls).toEqual([expectedTwiml(id)])
  const update = fake.requests.filter((r) => r.path === `/2010-04-01/Accounts/${fake.accountSid}/Calls/${sid}.json`)
  expect(update).toEqual([{ method: 'POST', path: `/2010-04-01/Accounts/${fake.accountSid}/Calls/${sid}.json`, authorized: true }])

  // Twilio stops the stream when the new TwiML runs: the call goes on, nobody hangs up.
  stream.send(JSON.stringify({ event: 'stop', sequenceNumber: '99', streamSid: 'MZ1', stop: { accountSid: fake.accountSid, callSid: sid } }))
  stream.close()
  await until(
    'the stream is done',
    () => s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] }).then((c) => c.get(`${id}:1`)),
    (row) => row?.media === 'done',
    5_000,
  )
  expect((await call(id)).body.status).toBe('connected')
  expect(updated.updates).toEqual([])

  const base = `${s.url}/telephony/twilio/transfer`
  const child = 'CA0000000000000000000000000000c1d1'
  const answered = await fake.post(`${base}/answered?call=${id}&attempt=1`, { CallSid: child, ParentCallSid: sid, CallStatus: 'in-progress', To: BILLING, From: OURS })
  expect(answered.status).toBe(204)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
  )
  const unsigned = await fetch(`${base}/ended?call=${id}&attempt=1`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ CallSid: sid }) })
  expect(unsigned.status).toBe(403)
  await s.console('POST', '/clock/advance', { ms: 42_000 })
  const ended = await fake.post(`${base}/ended?call=${id}&attempt=1`, { CallSid: sid, DialCallSid: child, DialCallStatus: 'completed', DialCallDuration: '42', CallStatus: 'in-progress' })
  expect(ended.status).toBe(200)
  expect(ended.headers.get('content-type')).toContain('text/xml')
  expect(await ended.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>')
  expect(await fake.callback(sid, { CallStatus: 'completed', CallDuration: '50' })).toBe(204)
  const done = await until(
    'completed',
    () => call(id),
    (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
    10_000,
  )
  expect(done.body.hangup).toBe('answered')
  expect(done.body.transfer).toMatchObject({ outcome: 'answered', seconds: 42, error: null })
}, 30_000)

test('a <Dial> nobody answers is no_answer; an update Twilio refuses is a 502 and the agent carries on', async () => {
  const first = await connected('+14155550912')
  expect((await s.api('POST', `/calls/${first.id}/transfer`, { key, body: { destination: 'billing' } })).status).toBe(202)
  const ended = await fake.post(`${s.url}/telephony/twilio/transfer/ended?call=${first.id}&attempt=1`, { CallSid: first.sid, DialCallStatus: 'no-answer', DialCallDuration: '0' })
  expect(ended.status).toBe(200)
  await fake.callback(first.sid, { CallStatus: 'completed', CallDuration: '40' })
  const done = await until(
    'completed',
    () => call(first.id),
    (r) => r.body.status === 'completed',
    10_000,
  )
  expect(done.body.transfer).toMatchObject({ outcome: 'no_answer', seconds: 0, answeredAt: null })

  const second = await connected('+14155550913')
  fake.refuseUpdates.add(second.sid)
  const refused = await s.api('POST', `/calls/${second.id}/transfer`, { key, body: { destination: 'Billing' } })
  expect(refused.status).toBe(502)
  expect(refused.body.error).toContain('Call is not in-progress')
  expect(refused.body.call).toMatchObject({ status: 'connected', transfer: { outcome: 'failed' } })
  expect((await call(second.id)).body.status).toBe('connected')
}, 30_000)
