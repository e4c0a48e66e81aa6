/**
 * A transfer by hand while the agent is mid-sentence: the agent finishes the sentence the caller
 * is hearing before the network takes the call, and says nothing after it; the transcript's last
 * agent line is what the caller heard, ending at that sentence's end. The line's marks say what
 * played: the callee echoes a mark only once it has played the audio before it, and it is gone
 * once the call is joined, so a sentence heard to its end played before the join.
 *
 * Speech engines: the sandbox doubles (formant voice, scripted transcripts); the manual clock.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

let s: TestServer
let dev: { id: string; key: string }
const BILLING = '+14155550877'
const CALLEE = '+14155550801'
const CLOSED = '+14155550878'
const ASKS = '+14155550802'

/** Three long sentences: a request lands inside one far more often than between two. */
const OPENING = [
  'Hello, this is the front desk of Sunrise Dental returning your call about moving your appointment.',
  'We have openings on Tuesday morning at nine and ten, and on Thursday afternoon at two and four.',
  'Would you like me to book one of those for you now, or shall we call you back later this week?',
]

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'scale' })
  const agent = (
    await s.agent(dev.key, {
      name: 'Front desk',
      voice: { answersCalls: true },
      transfers: [
        { name: 'Billing', phoneNumber: BILLING, whenToUse: 'questions about a bill', mode: 'cold' },
        { name: 'Closed desk', phoneNumber: CLOSED, whenToUse: 'never', mode: 'cold' },
      ],
    })
  ).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550800', source: 'rented', agent })).status).toBe(201)
  for (const phone of [CALLEE, ASKS]) expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(CLOSED)}`, { pickup: 'refuse', ringMs: 0, lines: [], hangupAfterMs: null })).status).toBe(200)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(ASKS)}`, { pickup: 'answer', ringMs: 0, lines: ['Can I book a cleaning?'], hangupAfterMs: null })).status).toBe(200)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(BILLING)}`, { pickup: 'answer', ringMs: 0, lines: ['Billing, this is Sam.'], hangupAfterMs: 20_000 })).status).toBe(200)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(CALLEE)}`, { pickup: 'answer', ringMs: 0, lines: [], hangupAfterMs: null })).status).toBe(200)
})
afterAll(() => s?.stop())

const call = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key })
const agentLines = (r: { body: any }): string[] => (r.body.transcript ?? []).filter((l: any) => l.speaker === 'agent').map((l: any) => l.text)

test('a transfer by hand mid-sentence: the sentence is heard to its end, then the caller is put through', async () => {
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: CALLEE, purpose: OPENING.join(' ') } })
  expect(placed.status, JSON.stringify(placed.body)).toBe(202)
  const id = placed.body.id
  // The caller has heard some of the opening, not all of it.
  const speaking = await until(
    'the agent is speaking',
    () => call(id),
    (r) => agentLines(r).some((t) => t.length > 0),
    20_000,
  )
  const heardThen = agentLines(speaking).at(-1)!
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Billing' } })
  expect(asked.status).toBe(202)
  const handed = await until(
    'put through to Billing',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    30_000,
  )
  const last = agentLines(handed).at(-1)!
  // What the caller heard ends at the end of a sentence of the opening, at or after where it was when the transfer was asked.
  const sentences = OPENING.map((_, i) => OPENING.slice(0, i + 1).join(' '))
  expect(sentences).toContain(last)
  expect(last.length).toBeGreaterThanOrEqual(heardThen.length)
  expect(last).not.toBe(OPENING.join(' '))
}, 60_000)

test('a hand-off the network refuses: the agent answers the caller again at once', async () => {
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: ASKS, purpose: OPENING.join(' ') } })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  await until(
    'the agent is speaking',
    () => call(id),
    (r) => agentLines(r).some((t) => t.length > 0),
    20_000,
  )
  const refused = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Closed desk' } })
  expect(refused.status).toBe(502)
  // The caller speaks after the sentence the agent finished; an answer held for the hand-off goes once it is called off.
  const answered = await until(
    "the agent answered the caller's line",
    () => call(id),
    (r) => {
      const lines = r.body.transcript ?? []
      const asked = lines.findIndex((l: any) => l.speaker === 'customer' && l.text === 'Can I book a cleaning?')
      return asked >= 0 && lines.slice(asked + 1).some((l: any) => l.speaker === 'agent' && l.text.length > 0)
    },
    20_000,
  )
  expect(answered.body.status).toBe('connected')
  expect(answered.body.transfer).toMatchObject({ to: 'Closed desk', outcome: 'failed' })
  await s.api('DELETE', `/calls/${id}`, { key: dev.key })
}, 60_000)
