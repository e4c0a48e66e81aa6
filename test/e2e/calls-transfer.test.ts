/**
 * Cold transfer on the sandbox network, end to end: the `local` model hears the callee ask for a
 * person and calls transfer_call; the reply is spoken, the agent leaves, the sandbox phone of the
 * destination answers and talks, and the call ends `completed` with `hangup: answered`, its
 * transfer on the record, the transcript of what was said before, `call.transfer_ended` on the bus
 * and the person's leg in the ledger as call minutes. A destination nobody answers ends the call
 * with `outcome: no_answer`. The recording covers what we carried (it is finished at the hand-off). By hand: POST /calls/{id}/transfer, its refusals (400 naming
 * `destination`, 409 for a call not connected), and idempotency.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { usageFeature } from '../../src/features/usage'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
const BILLING = '+14155550777'
const NOBODY = '+14155550778'

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'scale' })
  const agent = (
    await s.agent(dev.key, {
      name: 'Front desk',
      voice: { answersCalls: true, recordCalls: true },
      transfers: [
        { name: 'Billing', phoneNumber: '+1 (415) 555-0777', whenToUse: 'questions about a bill, a refund or a payment', mode: 'cold' },
        { name: 'Night desk', phoneNumber: NOBODY, whenToUse: 'anything after hours' },
      ],
    })
  ).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550700', source: 'rented', agent })).status).toBe(201)
  for (const phone of ['+14155550701', '+14155550702', '+14155550703', '+14155550704']) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(BILLING)}`, { pickup: 'answer', ringMs: 0, lines: ['Billing, this is Sam speaking.'], hangupAfterMs: 20_000 })).status).toBe(200)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(NOBODY)}`, { pickup: 'no_answer', ringMs: 5_000, lines: [], hangupAfterMs: null })).status).toBe(200)
})
afterAll(() => s?.stop())

const call = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key })
const sandbox = () => s.server.services.of(callsFeature).sandbox

test("the agent's transfer_call: the reply is spoken, the person answers and talks, the call ends answered and the leg is billed", async () => {
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550701', { pickup: 'answer', ringMs: 0, lines: ['I need a person.'], hangupAfterMs: null })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550701', purpose: 'Hello, this is the front desk returning your call.' } })).body.id
  const handed = await until(
    'put through to Billing',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    30_000,
  )
  expect(handed.body.status).toBe('connected')
  expect(handed.body.transfer).toMatchObject({ to: 'Billing', phoneNumber: BILLING, mode: 'cold', by: 'agent', outcome: null, seconds: 0, error: null })
  const callRef = handed.body.callRef
  // The recording covers what we carried: it is finished at the hand-off, while the caller talks on.
  const recorded = await until(
    'the recording is ready',
    () => call(id),
    (r) => r.body.recording?.ready === true,
    10_000,
  )
  expect(recorded.body.status).toBe('connected')
  expect(sandbox().transfers.get(callRef)).toEqual({ to: BILLING, answered: true, said: ['Billing, this is Sam speaking.'] })
  // The person's phone hangs up after 20 s of service-clock time: the leg, then the call, end.
  await s.console('POST', '/clock/advance', { ms: 20_000 })
  const done = await until(
    'ended and analysed',
    () => call(id),
    (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
    20_000,
  )
  expect(done.body.hangup).toBe('answered')
  expect(done.body.transfer).toMatchObject({ to: 'Billing', outcome: 'answered', seconds: 20, error: null })
  expect(done.body.transcript.map((l: any) => [l.speaker, l.text])).toEqual([
    ['agent', 'Hello, this is the front desk returning your call.'],
    ['customer', 'I need a person.'],
    ['agent', "Of course. I'm connecting you with Billing now, please hold."],
  ])
  const events = await s.server.services.bus.events.find({ type: 'call.transfer_ended' })
  expect(events.filter((e: any) => e.data.id === id).map((e: any) => e.data.transfer.outcome)).toEqual(['answered'])
  // The person's leg is a call minute of its own, beside the caller's.
  const minutes = (await s.server.services.of(usageFeature).ledger.records.find({ workspaceId: dev.id, kind: 'call_minute' })).filter((r: any) => r.refs?.callId === id || r.callId === id)
  expect(minutes.map((r: any) => r.id).sort()).toEqual([`use_call_${id}:1`, `use_call_${id}:1_transfer`])
  expect(done.body.seconds).toBeGreaterThanOrEqual(20)
}, 60_000)

test('by hand: refusals name the field or the state; a destination nobody answers ends the call no_answer', async () => {
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550702', { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: null })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550702', purpose: 'Hello there.' } })).body.id
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected' && r.body.transcript.length > 0,
    20_000,
  )
  const unknown = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Sales' } })
  expect(unknown.status).toBe(400)
  expect(unknown.body.error).toContain('destination')
  expect(unknown.body.error).toContain('Billing, Night desk')
  expect((await s.api('POST', '/calls/out_nope/transfer', { key: dev.key, body: { destination: 'Billing' } })).status).toBe(404)
  const key = `transfer-${id}`
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'night DESK' }, headers: { 'idempotency-key': key } })
  expect(asked.status).toBe(202)
  expect(asked.body.transfer).toMatchObject({ to: 'Night desk', phoneNumber: NOBODY, mode: 'cold', by: 'api', outcome: null })
  expect(asked.body.transfer.startedAt).toBeString()
  // The same request again is the same answer; another one is refused: the call is being handed over.
  const again = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'night DESK' }, headers: { 'idempotency-key': key } })
  expect(again.status).toBe(202)
  expect(again.body.transfer.requestedAt).toBe(asked.body.transfer.requestedAt)
  const twice = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Billing' } })
  expect(twice.status).toBe(409)
  expect(twice.body.state).toBe('transferred')
  await s.console('POST', '/clock/advance', { ms: 5_000 })
  const done = await until(
    'nobody answered: the call ended',
    () => call(id),
    (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
    20_000,
  )
  expect(done.body.hangup).toBe('answered')
  expect(done.body.transfer).toMatchObject({ outcome: 'no_answer', seconds: 0, answeredAt: null })
  const ended = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Billing' } })
  expect(ended.status).toBe(409)
  expect(ended.body.state).toBe('completed')
  expect(sandbox().transfers.get(done.body.callRef)).toEqual({ to: NOBODY, answered: false, said: [] })
}, 60_000)

test('an inbound call is transferred by hand like an outbound one', async () => {
  const rang = await s.console('POST', '/sandbox/calls', { from: '+14155550704', to: '+14155550700', lines: [], hangupAfterMs: null })
  expect(rang.body.answered).toBe(true)
  const listed = await until(
    'the inbound call is live',
    () => s.console('GET', `/workspaces/${dev.id}/calls?direction=inbound&live=true`),
    (r) => r.body.items.some((c: any) => c.callRef === rang.body.callRef && c.transcript.length > 0),
    20_000,
  )
  const id = listed.body.items.find((c: any) => c.callRef === rang.body.callRef).id
  expect(id).toStartWith('in_')
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Billing' } })
  expect(asked.status).toBe(202)
  expect(asked.body).toMatchObject({ direction: 'inbound', transfer: { to: 'Billing', by: 'api' } })
  await until(
    'the person answered',
    () => s.console('GET', `/workspaces/${dev.id}/calls/${id}`),
    (r) => r.body.transfer?.answeredAt != null,
    10_000,
  )
  await s.console('POST', '/clock/advance', { ms: 20_000 })
  const done = await until(
    'ended',
    () => s.console('GET', `/workspaces/${dev.id}/calls/${id}`),
    (r) => r.body.status === 'completed',
    10_000,
  )
  expect(done.body).toMatchObject({ hangup: 'answered', transfer: { outcome: 'answered', seconds: 20 } })
}, 60_000)

test('DELETE of a transferred call ends it as a live call (202, hangup cancelled), closing the transfer', async () => {
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550705' })).status).toBe(201)
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550705', { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: null })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550705', purpose: 'Hello.' } })).body.id
  await until(
    'connected',
    () => call(id),
    (r) => r.body.status === 'connected',
    20_000,
  )
  expect((await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Billing' } })).status).toBe(202)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    10_000,
  )
  await s.console('POST', '/clock/advance', { ms: 5_000 })
  const ended = await s.api('DELETE', `/calls/${id}`, { key: dev.key })
  expect(ended.status).toBe(202)
  expect(ended.body).toMatchObject({ status: 'completed', hangup: 'cancelled', transfer: { outcome: 'answered', seconds: 5 } })
}, 60_000)
