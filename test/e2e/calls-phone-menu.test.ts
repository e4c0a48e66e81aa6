/**
 * The agent presses keys, on the sandbox network: a phone menu answers ("press 1 for appointments,
 * 2 for billing"), the agent (the `local` model) picks the option its call is about with its
 * send_digits tool, the keys go down the line as tones, and the menu goes on only on the right key.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { NO_REPLY } from '../../src/features/conversations/engine'
import { MENU_RETRY } from '../../src/providers/telephony/callee-lines'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale', name: 'Menus' })
})
afterAll(() => s?.stop())

/**
 * A new agent (`name`, on `number`) calls `contact`, a sandbox phone that answers at once with
 * `lines`: the call's id, and its callee once the call is placed (its log: what it said and the
 * keys it heard).
 */
async function callMenu(name: string, number: string, contact: string, lines: string[]) {
  const agent = await s.agent(dev.key, { name, model: 'local', instructions: 'You call clinics to book an appointment for a patient.', voice: { answersCalls: true } })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number, source: 'rented', agent: agent.id })).status).toBe(201)
  await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: contact })
  await s.console('PUT', `/sandbox/phones/${encodeURIComponent(contact)}`, { pickup: 'answer', ringMs: 0, lines, hangupAfterMs: 60 * SEC })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: contact, purpose: 'Hello, I am calling to book an appointment.', agent: agent.id } })
  expect(placed.status).toBe(202)
  const { sandbox } = s.server.services.of(callsFeature)
  const row = await until(
    'placed',
    () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
    (r) => !!r.body.callRef,
  )
  const callee = await until(
    'the callee',
    async () => sandbox.callee(row.body.callRef),
    (c) => !!c,
  )
  return { id: placed.body.id as string, callee: callee! }
}

test('the agent presses the key for what it calls about; the menu goes on', async () => {
  const { id, callee } = await callMenu('Booker', '+14155557900', '+14155557901', ['[menu 1] Press 1 for appointments, press 2 for billing.', 'Appointments desk, how can I help?'])
  await until(
    'the menu went on',
    async () => callee.log.said,
    (said) => said.includes('Appointments desk, how can I help?'),
    30_000,
  )
  expect(callee.log.keysHeard).toEqual(['1'])
  const call = await until(
    'the keys in the transcript',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => (r.body.transcript ?? []).some((l: any) => l.text === '[keypad] 1'),
    10_000,
  )
  expect(call.body.transcript.find((l: any) => l.text === '[keypad] 1').speaker).toBe('agent')
  // Nothing said over the menu: its keys are the agent's whole answer to it.
  const agentLines = call.body.transcript.filter((l: any) => l.speaker === 'agent').map((l: any) => l.text)
  expect(agentLines.slice(0, 2)).toEqual(['Hello, I am calling to book an appointment.', '[keypad] 1'])
  expect(agentLines).not.toContain(NO_REPLY)
}, 60_000)

test('a key the menu has no option for: it says so and asks again, and does not go on', async () => {
  // The menu's appointments are on 2 but it says 1: the agent presses 1, which this menu refuses.
  const { id, callee } = await callMenu('Wrong key', '+14155557910', '+14155557911', ['[menu 2] Press 1 for appointments, press 2 for billing.', 'Billing, how can I help?'])
  await until(
    'asked again',
    async () => callee.log.said,
    (said) => said.some((l) => l.startsWith(MENU_RETRY)),
    30_000,
  )
  expect(callee.log.keysHeard[0]).toBe('1')
  expect(callee.log.said).not.toContain('Billing, how can I help?')
  await s.api('DELETE', `/calls/${id}`, { key: dev.key })
}, 60_000)
