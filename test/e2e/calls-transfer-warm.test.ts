/**
 * Warm transfer on the sandbox network, end to end: the `local` model hears the callee ask for a
 * person and calls transfer_call for a `warm` destination; the caller stays with the agent while
 * the person's phone is called on a leg of its own and hears the brief (who is waiting and why);
 * the person takes the call, the agent leaves, and the call ends `completed` with the leg on the
 * record, on the bus and in the ledger. A person who does not answer (by hand, POST
 * /calls/{id}/transfer) or whose voicemail picks up (declined) ends the transfer there: the call is
 * still connected, the agent tells the caller so (in the transcript) and the call goes on.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { usageFeature } from '../../src/features/usage'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
const MANAGER = '+14155550877'
const NOBODY = '+14155550878'
const MACHINE = '+14155550879'

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'scale' })
  const agent = (
    await s.agent(dev.key, {
      name: 'Front desk',
      voice: { answersCalls: true },
      transfers: [
        { name: 'Manager', phoneNumber: MANAGER, whenToUse: 'a person, a complaint or anything the agent cannot do', mode: 'warm' },
        { name: 'Night desk', phoneNumber: NOBODY, whenToUse: 'anything after hours', mode: 'warm' },
        { name: 'Records', phoneNumber: MACHINE, whenToUse: 'medical records', mode: 'warm' },
      ],
    })
  ).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550800', source: 'rented', agent })).status).toBe(201)
  for (const phone of ['+14155550801', '+14155550802'])
    expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone, ...(phone.endsWith('1') ? { name: 'Dana Reyes' } : {}) })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(MANAGER)}`, { pickup: 'answer', ringMs: 0, lines: ['Manager here, how can I help?'], hangupAfterMs: 30_000 })).status).toBe(200)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(NOBODY)}`, { pickup: 'no_answer', ringMs: 5_000, lines: [], hangupAfterMs: null })).status).toBe(200)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(MACHINE)}`, { pickup: 'voicemail', ringMs: 2_000, lines: [], hangupAfterMs: null })).status).toBe(200)
})
afterAll(() => s?.stop())

const call = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key })
const sandbox = () => s.server.services.of(callsFeature).sandbox

test('the person answers: briefed on a leg of its own, then joined; the leg is on the record, the bus and the ledger', async () => {
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550801', { pickup: 'answer', ringMs: 0, lines: ['I want to speak to a person about my bill.'], hangupAfterMs: null })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550801', purpose: 'Hello, this is the front desk returning your call.' } })).body.id
  const joined = await until(
    'put through to the manager',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    30_000,
  )
  expect(joined.body.status).toBe('connected')
  // The agent has left: the join closed its media stream, which did not end the call.
  await until(
    'the stream is done',
    () => s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] }).then((c) => c.get(`${id}:1`)),
    (row) => row?.media === 'done',
    10_000,
  )
  expect((await call(id)).body.status).toBe('connected')
  expect(joined.body.transfer).toMatchObject({ to: 'Manager', phoneNumber: MANAGER, mode: 'warm', by: 'agent', outcome: null, error: null })
  expect(joined.body.transfer.startedAt).toBeString()
  // The person heard who is waiting and why before taking the call, then talked with the caller.
  const leg = sandbox().transfers.get(joined.body.callRef)!
  expect(leg).toMatchObject({ to: MANAGER, answered: true, said: ['Manager here, how can I help?'] })
  expect(leg.heard).toEqual(['Hello, this is Front desk. I have Dana Reyes on the line for Manager. They said: "I want to speak to a person about my bill."'])
  await s.console('POST', '/clock/advance', { ms: 30_000 })
  const done = await until(
    'ended and analysed',
    () => call(id),
    (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
    20_000,
  )
  expect(done.body.hangup).toBe('answered')
  expect(done.body.transfer).toMatchObject({ mode: 'warm', outcome: 'answered', seconds: 30, error: null })
  const events = await s.server.services.bus.events.find({ type: 'call.transfer_ended' })
  expect(events.filter((e: any) => e.data.id === id).map((e: any) => [e.data.transfer.mode, e.data.transfer.outcome])).toEqual([['warm', 'answered']])
  const minutes = (await s.server.services.of(usageFeature).ledger.records.find({ workspaceId: dev.id, kind: 'call_minute' })).filter((r: any) => r.refs?.callId === id || r.callId === id)
  expect(minutes.map((r: any) => r.id).sort()).toEqual([`use_call_${id}:1`, `use_call_${id}:1_transfer`])
}, 60_000)

test('nobody answers (by hand), then a voicemail picks up (declined): each time the agent tells the caller and the call goes on', async () => {
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550802', { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: null })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550802', purpose: 'Hello there.' } })).body.id
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected' && r.body.transcript.length > 0,
    20_000,
  )
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'night desk' } })
  expect(asked.status).toBe(202)
  expect(asked.body).toMatchObject({ status: 'connected', transfer: { to: 'Night desk', mode: 'warm', by: 'api', outcome: null } })
  expect(asked.body.transfer.startedAt).toBeString()
  // While the person is called the caller is with the agent: another transfer waits for this one.
  const twice = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Manager' } })
  expect([twice.status, twice.body.state]).toEqual([409, 'consulting'])
  await s.console('POST', '/clock/advance', { ms: 5_000 })
  const missed = await until(
    'the agent says nobody answered',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes("Night desk didn't pick up")),
    20_000,
  )
  expect(missed.body.status).toBe('connected')
  expect(missed.body.transfer).toMatchObject({ to: 'Night desk', outcome: 'no_answer', seconds: 0, answeredAt: null })
  expect(sandbox().transfers.get(missed.body.callRef)).toEqual({ to: NOBODY, answered: false, said: [], heard: [] })

  // A transfer that did not connect can be asked again: a machine answers and takes nothing.
  expect((await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Records' } })).status).toBe(202)
  await s.console('POST', '/clock/advance', { ms: 2_000 })
  const declined = await until(
    'the agent says the person cannot take it',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes("Records can't take the call right now")),
    20_000,
  )
  expect(declined.body.status).toBe('connected')
  expect(declined.body.transfer).toMatchObject({ to: 'Records', outcome: 'declined' })
  expect(sandbox().transfers.get(declined.body.callRef)).toMatchObject({ to: MACHINE, answered: true, heard: [expect.stringContaining('on the line for Records')] })
  const events = await s.server.services.bus.events.find({ type: 'call.transfer_ended' })
  expect(events.filter((e: any) => e.data.id === id).map((e: any) => e.data.transfer.outcome)).toEqual(['no_answer', 'declined'])
  // The call goes on with the agent until it is ended.
  const ended = await s.api('DELETE', `/calls/${id}`, { key: dev.key })
  expect(ended.status).toBe(202)
  expect(ended.body).toMatchObject({ status: 'completed', hangup: 'cancelled', transfer: { outcome: 'declined' } })
}, 60_000)
