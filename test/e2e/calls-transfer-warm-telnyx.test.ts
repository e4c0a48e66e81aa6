/**
 * Warm transfer on TELEPHONY_PROVIDER=telnyx against the local fake of Telnyx's Call Control API:
 * the person is dialed on a second call (`POST /v2/calls`, `link_to` the caller's call, the brief in
 * its client_state), briefed with one key gathered once they answer (`gather_using_speak`); their 1
 * (`call.gather.ended`) bridges the caller's call to their leg (`actions/bridge`) and stops our
 * stream; the leg's `call.hangup` bills its seconds. A leg nobody answers and one whose person
 * presses no key leave the call connected, and the agent tells the caller on its stream.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { decodeLegState } from '../../src/providers/telephony/telnyx-events'
import type { TelnyxFake, TelnyxStream } from '../fakes/telnyx'
import type { TestServer } from '../support/server'
import { startTelnyxServer, type TelnyxServer } from '../support/telnyx-server'
import { until } from '../support/until'

let telnyx: TelnyxServer
let fake: TelnyxFake
let s: TestServer
let key: string
const MANAGER = '+14155551987'
const OURS = '+14155551900'

const call = (id: string) => s.api('GET', `/calls/${id}`, { key })
const actionsOf = (ref: string) => fake.calls.find((c) => c.callControlId === ref)!.actions.map((a) => a.action)

beforeAll(async () => {
  telnyx = await startTelnyxServer()
  ;({ fake, s } = telnyx)
  const dev = await s.developer({ plan: 'pro' })
  key = dev.key
  const agent = (await s.agent(key, { name: 'Desk', voice: { answersCalls: true }, transfers: [{ name: 'Manager', phoneNumber: MANAGER, whenToUse: 'complaints', mode: 'warm' }] })).id
  await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: OURS, source: 'rented', agent })
  for (const phone of ['+14155551921', '+14155551922', '+14155551923']) await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })
})
afterAll(async () => {
  await telnyx?.stop()
})

/** Places a call through the fake, has Telnyx answer it and opens its media stream as Telnyx would. */
async function connected(to: string): Promise<{ id: string; ref: string; line: TelnyxStream }> {
  const id = (await s.api('POST', '/calls', { key, body: { to, purpose: 'Hello, this is the desk.' } })).body.id
  const ref = fake.calls.at(-1)!.callControlId
  expect(await fake.webhook(ref, 'call.answered')).toBe(204)
  const line = await fake.stream(ref, { echoMarks: true })
  await until(
    'the agent spoke',
    () => call(id),
    (r) => r.body.status === 'connected' && r.body.transcript.length > 0,
    10_000,
  )
  return { id, ref, line }
}

/** The person's leg the transfer dialed. */
async function legOf(id: string) {
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key, body: { destination: 'Manager' } })
  expect(asked.status).toBe(202)
  expect(asked.body).toMatchObject({ status: 'connected', transfer: { to: 'Manager', mode: 'warm', by: 'api', outcome: null } })
  const leg = fake.calls.at(-1)!
  expect(leg.dial.to).toBe(MANAGER)
  return leg
}

test("the person is dialed and briefed, presses 1, and the caller is bridged to them; the leg's seconds are billed", async () => {
  const { id, ref, line } = await connected('+14155551921')
  const leg = await legOf(id)
  expect(leg.dial).toMatchObject({
    connection_id: fake.connectionId,
    to: MANAGER,
    from: OURS,
    timeout_secs: 30,
    link_to: ref,
    webhook_url: `${s.url}/telephony/telnyx/events`,
  })
  expect(leg.dial.bridge_intent).toBeUndefined()
  const brief = 'Hello, this is Desk. I have a caller from 1 4 1 5 5 5 5 1 9 2 1 on the line for Manager.'
  expect(decodeLegState(leg.dial.client_state)).toEqual({ c: id, a: 1, l: 'warm', n: OURS, b: brief })
  // The caller is still ours meanwhile: nothing commanded on their call but its stream.
  expect(actionsOf(ref)).toEqual(['streaming_start'])

  expect(await fake.webhook(leg.callControlId, 'call.answered')).toBe(204)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
  )
  expect(leg.actions).toEqual([
    {
      action: 'gather_using_speak',
      body: { payload: `${brief} Press 1 to take the call.`, payload_type: 'text', voice: 'female', language: 'en-US', minimum_digits: 1, maximum_digits: 1, maximum_tries: 1, timeout_millis: 10_000 },
    },
  ])
  expect(await fake.webhook(leg.callControlId, 'call.gather.ended', { digits: '1', status: 'valid' }, { forged: true })).toBe(403)
  expect(actionsOf(ref)).toEqual(['streaming_start'])

  expect(await fake.press(leg.callControlId, '1')).toBe(204)
  await until(
    'bridged, then the stream stopped',
    async () => actionsOf(ref),
    (actions) => actions.join() === 'streaming_start,bridge,streaming_stop',
  )
  expect(fake.calls.find((c) => c.callControlId === ref)!.actions[1]!.body).toEqual({ call_control_id: leg.callControlId })
  expect(leg.bridgedTo).toBe(ref)

  // Telnyx stops the stream it was told to: that is not the call's end.
  line.send({ event: 'stop', sequence_number: '99', stop: { call_control_id: ref } })
  line.socket.close()
  await until(
    'the stream is done',
    () => s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] }).then((c) => c.get(`${id}:1`)),
    (row) => row?.media === 'done',
    5_000,
  )
  expect((await call(id)).body.status).toBe('connected')

  await s.console('POST', '/clock/advance', { ms: 45_000 })
  const startTime = new Date(Date.now() - 45_000).toISOString()
  expect(await fake.webhook(leg.callControlId, 'call.hangup', { hangup_cause: 'normal_clearing', hangup_source: 'callee', start_time: startTime })).toBe(204)
  expect(await fake.webhook(ref, 'call.hangup', { hangup_cause: 'normal_clearing', hangup_source: 'callee' })).toBe(204)
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
  const { id, ref, line } = await connected('+14155551922')
  const first = await legOf(id)
  expect(await fake.webhook(first.callControlId, 'call.hangup', { hangup_cause: 'timeout', hangup_source: 'callee' })).toBe(204)
  const missed = await until(
    'the agent says nobody answered',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes("Manager didn't pick up")),
    10_000,
  )
  expect(missed.body).toMatchObject({ status: 'connected', transfer: { outcome: 'no_answer', seconds: 0 } })

  const second = await legOf(id)
  expect(await fake.webhook(second.callControlId, 'call.answered')).toBe(204)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
  )
  await s.console('POST', '/clock/advance', { ms: 14_000 })
  expect(await fake.webhook(second.callControlId, 'call.gather.ended', { digits: '', status: 'timeout' })).toBe(204)
  const told = await until(
    'the agent says the person cannot take it',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes("Manager can't take the call right now")),
    10_000,
  )
  expect(told.body).toMatchObject({ status: 'connected', transfer: { outcome: 'declined', seconds: 14 } })
  // The person hears goodbye, and their leg is hung up once it has been said.
  const bye = second.actions.find((a) => a.action === 'speak')!
  expect(bye.body).toMatchObject({ payload: 'Thank you. Goodbye.', voice: 'female' })
  expect(decodeLegState(bye.body.client_state)).toEqual({ c: id, a: 1, l: 'warm', n: OURS, e: 'bye' })
  expect(await fake.webhook(second.callControlId, 'call.speak.ended', { status: 'completed' })).toBe(204)
  expect(second.actions.map((a) => a.action)).toEqual(['gather_using_speak', 'speak', 'hangup'])
  // The declined leg's own end changes nothing more; the caller's call was never bridged.
  expect(await fake.webhook(second.callControlId, 'call.hangup', { hangup_cause: 'normal_clearing', start_time: new Date(Date.now() - 16_000).toISOString() })).toBe(204)
  expect((await call(id)).body).toMatchObject({ status: 'connected', transfer: { outcome: 'declined', seconds: 14 } })
  expect(actionsOf(ref)).toEqual(['streaming_start'])
  line.socket.close()
}, 30_000)

test('the caller hangs up while the person hears the brief: their leg is hung up, and a late 1 bridges nobody', async () => {
  const { id, ref, line } = await connected('+14155551923')
  const leg = await legOf(id)
  expect(await fake.webhook(leg.callControlId, 'call.answered')).toBe(204)
  await until(
    'the person answered',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
  )
  line.socket.close()
  expect(await fake.webhook(ref, 'call.hangup', { hangup_cause: 'normal_clearing', hangup_source: 'callee' })).toBe(204)
  await until(
    "the person's leg is hung up",
    async () => leg.actions.map((a) => a.action),
    (actions) => actions.includes('hangup'),
    10_000,
  )
  expect((await call(id)).body).toMatchObject({ status: 'completed', transfer: { outcome: 'failed', error: 'the caller left before the person was connected' } })
  expect(await fake.press(leg.callControlId, '1')).toBe(204)
  expect(actionsOf(ref)).not.toContain('bridge')
}, 30_000)

test("on a number with its own Telnyx account, the person's leg is dialed, briefed and let go on that account", async () => {
  const own = fake.addAccount()
  const dev = await s.developer({ plan: 'pro' })
  const agent = (await s.agent(dev.key, { name: 'Own desk', voice: { answersCalls: true }, transfers: [{ name: 'Manager', phoneNumber: MANAGER, whenToUse: 'complaints', mode: 'warm' }] })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155551930', source: 'brought', agent, carrierAccount: own })).status).toBe(201)
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155551931' })
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155551931', purpose: 'Hello.', agent } })).body.id
  const ref = fake.calls.at(-1)!.callControlId
  expect(await fake.webhook(ref, 'call.answered')).toBe(204)
  const line = await fake.stream(ref, { echoMarks: true })
  await until(
    'the agent spoke',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.transcript.length > 0,
    10_000,
  )
  expect((await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Manager' } })).status).toBe(202)
  const leg = fake.calls.at(-1)!
  expect(leg.apiKey).toBe(own.apiKey)
  expect(leg.dial.connection_id).toBe(own.connectionId)
  expect(await fake.webhook(leg.callControlId, 'call.answered')).toBe(204)
  expect(leg.actions.map((a) => a.action)).toEqual(['gather_using_speak'])
  // The caller leaves: the person's leg is hung up with the number's key (another account's is refused 404 at Telnyx).
  line.socket.close()
  expect(await fake.webhook(ref, 'call.hangup', { hangup_cause: 'normal_clearing', hangup_source: 'callee' })).toBe(204)
  await until(
    "the person's leg is hung up on the number's account",
    async () => leg.actions.map((a) => a.action),
    (actions) => actions.includes('hangup'),
    10_000,
  )
}, 30_000)
