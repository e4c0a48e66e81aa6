/**
 * A scripted sandbox callee under the manual clock: its conversation is real-time audio, so moving
 * the service clock past its `hangupAfterMs` while it talks does not cut it off. It finishes its
 * lines (and hears the answer to the last), then hangs up; the transcript has every line.
 * Inbound calls rung with `lines` (console `POST /sandbox/calls`) behave the same.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
const MIN = 60 * SEC
const LINES = ['What time do you open on Saturday?', 'My name is Priya.']
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale', name: 'Scripted' })
})
afterAll(() => s?.stop())

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const rows = () => s.server.services.store.collection<any>({ name: 'call_tries', indexes: [] })
const customerLines = (transcript: { speaker: string; text: string }[]) => transcript.filter((l) => l.speaker === 'customer').map((l) => l.text)

test('an outbound call: the clock moved minutes past hangupAfterMs right after the answer; the callee still says both lines, then hangs up', async () => {
  const agent = await s.agent(dev.key, { name: 'Bean There', voice: { answersCalls: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553300', source: 'rented', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155553301' })).status).toBe(201)
  expect((await s.console('PUT', '/sandbox/phones/%2B14155553301', { pickup: 'answer', ringMs: 0, lines: LINES, hangupAfterMs: 60 * SEC })).status).toBe(200)
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155553301', purpose: 'Hi, this is Bean There.', agent: agent.id } })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  const row = await until(
    'connected',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  const { sandbox } = s.server.services.of(callsFeature)
  const callee = (await until(
    'callee on the line',
    async () => sandbox.callee(row.body.callRef),
    (c) => !!c,
  ))!

  // Five minutes of service time at once: the hang-up (due at 60 s) falls due before the callee has spoken.
  expect((await advance(5 * MIN)).status).toBe(200)
  expect((await s.api('GET', `/calls/${id}`, { key: dev.key })).body.status).toBe('connected')

  // It hangs up once its script is done (well within the 60 s of real audio it would otherwise get).
  const done = await until(
    'ended and analysed',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.analysedAt !== null,
    45_000,
  )
  expect(callee.log.said).toEqual(LINES)
  expect(customerLines(done.body.transcript)).toEqual(LINES)
  // The last line was answered before the hang-up.
  expect(done.body.transcript.at(-1).speaker).toBe('agent')
  expect(done.body).toMatchObject({ status: 'completed', hangup: 'answered' })
  // Ended on the service clock where it stood when the callee hung up.
  expect(done.body.seconds).toBe(5 * 60)
}, 60_000)

test('an inbound call rung with lines: the same', async () => {
  const agent = await s.agent(dev.key, { name: 'Front desk', greeting: 'Hello, Bean There here.', voice: { answersCalls: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553310', source: 'rented', agent: agent.id })).status).toBe(201)
  const rang = await s.console('POST', '/sandbox/calls', { from: '+14155553311', to: '+14155553310', lines: LINES, hangupAfterMs: 60 * SEC })
  expect(rang.body.answered).toBe(true)
  const tries = await rows()
  const [row] = await until(
    'the inbound row',
    () => tries.find({ workspaceId: dev.id, direction: 'inbound' }),
    (r) => r.length === 1,
  )
  expect((await advance(5 * MIN)).status).toBe(200)
  const [done] = await until(
    'ended and analysed',
    () => tries.find({ callId: row.callId }),
    (r) => r[0]?.analysedAt !== null,
    45_000,
  )
  expect(customerLines(done.transcript)).toEqual(LINES)
  expect(done).toMatchObject({ status: 'completed', hangup: 'answered' })
}, 60_000)

test('a callee without lines still hangs up on the service clock, at its hangupAfterMs', async () => {
  const agent = await s.agent(dev.key, { name: 'Quiet line', voice: { answersCalls: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155553320', source: 'rented', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155553321' })).status).toBe(201)
  expect((await s.console('PUT', '/sandbox/phones/%2B14155553321', { pickup: 'answer', ringMs: 0, hangupAfterMs: 20 * SEC })).status).toBe(200)
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155553321', purpose: 'Hello.', agent: agent.id } })).body.id
  await until(
    'connected',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'connected',
  )
  await advance(5 * MIN)
  const done = await until(
    'ended',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'completed',
  )
  expect(done.body).toMatchObject({ hangup: 'answered', seconds: 20 })
})
