/**
 * Voicemail drop on the sandbox network, end to end: a machine answers, plays its greeting and a
 * beep; the agent waits for the network's verdict, leaves its message (the contact's variables
 * filled), and the call ends `completed` with `hangup: voicemail`, the message in the transcript.
 * A person on the same agent hears the opening instead; an agent with no message hangs up on the
 * machine as before (missed, `voicemail`).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
let s: TestServer
let dev: { id: string; key: string }
let clinic: { id: string }

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale', name: 'Voicemail' })
  clinic = await s.agent(dev.key, {
    name: 'Clinic',
    voice: { answersCalls: true, detectMachines: true, voicemailMessage: 'Hi {{firstName}}, this is Sunrise Dental about your cleaning tomorrow. Please call us back.' },
  })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557800', source: 'rented', agent: clinic.id })).status).toBe(201)
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557801', name: 'Priya Raman' })
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557802' })
})
afterAll(() => s?.stop())

const phone = (number: string, behaviour: Record<string, unknown>) => s.console('PUT', `/sandbox/phones/${encodeURIComponent(number)}`, behaviour)
const get = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key })

test('a machine answers: after its beep the agent leaves the message and hangs up (completed, voicemail)', async () => {
  await phone('+14155557801', { pickup: 'voicemail', ringMs: 0, lines: ['Hi, this is Priya. Leave a message.'], hangupAfterMs: 120 * SEC })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557801', purpose: 'Hello Priya, I am calling to confirm your cleaning tomorrow.' } })
  expect(placed.status).toBe(202)
  const done = await until(
    'the message left and the call ended',
    () => get(placed.body.id),
    (r) => r.body.status === 'completed',
    30_000,
  )
  expect(done.body.hangup).toBe('voicemail')
  const agentLines = done.body.transcript.filter((l: any) => l.speaker === 'agent').map((l: any) => l.text)
  expect(agentLines).toEqual(['Hi Priya, this is Sunrise Dental about your cleaning tomorrow. Please call us back.'])
  expect(done.body.transcript.filter((l: any) => l.speaker === 'customer')).toEqual([])
  const analysed = await until(
    'analysed',
    () => get(placed.body.id),
    (r) => r.body.analysedAt != null,
    30_000,
  )
  expect(analysed.body.hangup).toBe('voicemail')
}, 60_000)

test('a person answers the same agent: the opening plays, no message', async () => {
  await phone('+14155557802', { pickup: 'answer', ringMs: 0, hangupAfterMs: 60 * SEC })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557802', purpose: 'Hello, I am calling to confirm your cleaning tomorrow.' } })
  const spoke = await until(
    'the opening',
    () => get(placed.body.id),
    (r) => (r.body.transcript ?? []).some((l: any) => l.speaker === 'agent' && l.text.endsWith('tomorrow.')),
    20_000,
  )
  expect(spoke.body.transcript.map((l: any) => [l.speaker, l.text])).toEqual([['agent', 'Hello, I am calling to confirm your cleaning tomorrow.']])
  await s.console('POST', '/clock/advance', { ms: 61 * SEC })
  const done = await until(
    'ended',
    () => get(placed.body.id),
    (r) => r.body.status === 'completed',
    20_000,
  )
  expect(done.body.hangup).toBe('answered')
}, 60_000)

test('an agent with no message hangs up on the machine: missed, voicemail', async () => {
  const agent = await s.agent(dev.key, { name: 'No message', voice: { answersCalls: true, detectMachines: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557810', source: 'rented', agent: agent.id })).status).toBe(201)
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557811' })
  await phone('+14155557811', { pickup: 'voicemail', ringMs: 0 })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557811', purpose: 'Hello.', agent: agent.id } })
  const done = await until(
    'missed',
    () => get(placed.body.id),
    (r) => r.body.status === 'missed',
    20_000,
  )
  expect(done.body.hangup).toBe('voicemail')
})

test('a calling campaign counts the voicemails its calls left (within delivered)', async () => {
  for (const p of ['+14155557821', '+14155557822']) await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: p, name: 'Alex' })
  await phone('+14155557821', { pickup: 'voicemail', ringMs: 0, hangupAfterMs: 120 * SEC })
  await phone('+14155557822', { pickup: 'no_answer', ringMs: 0 })
  const made = await s.console('POST', `/workspaces/${dev.id}/campaigns`, {
    agent: clinic.id,
    name: 'Reminders',
    kind: 'voice',
    purpose: 'Hello, calling about your cleaning.',
    recipients: ['+14155557821', '+14155557822'],
  })
  expect(made.status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/campaigns/${made.body.id}/start`)).body.status).toBe('sending')
  const done = await until(
    'the message left and counted',
    () => s.api('GET', `/campaigns/${made.body.id}`, { key: dev.key }),
    (r) => r.body.counts.voicemails === 1,
    40_000,
  )
  expect(done.body.counts).toMatchObject({ recipients: 2, sent: 2, delivered: 1, voicemails: 1 })
}, 60_000)
