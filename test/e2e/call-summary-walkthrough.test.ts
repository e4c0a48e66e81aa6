/**
 * The README's walkthrough call, as a new user places it: the `local` model's agent Ava of Bright
 * Smile calls Sam with the purpose "Hello Sam, this is Ava from Bright Smile.", Sam asks when the
 * clinic is open and hangs up. The summary says what the call was about and how it went, in its
 * own words, not the greeting it opened with.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
let s: TestServer

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
})
afterAll(() => s?.stop())

test("the README's walkthrough call: the summary states the purpose and the outcome, not the greeting", async () => {
  const dev = await s.developer({ plan: 'scale', name: 'Walkthrough' })
  const agent = (
    await s.agent(dev.key, { name: 'Ava', businessDescription: 'Bright Smile, a dental clinic.', instructions: 'We are open from 9am to 5pm, Monday to Friday.', voice: { recordCalls: true } })
  ).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550100', source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550123', name: 'Sam' })).status).toBe(201)
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550123', { pickup: 'answer', ringMs: 2000, lines: ['When are you open?'], hangupAfterMs: 15000 })).status).toBe(200)
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550123', purpose: 'Hello Sam, this is Ava from Bright Smile.' } })
  expect(placed.status).toBe(202)
  const call = () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key })
  await s.console('POST', '/clock/advance', { ms: 2 * SEC })
  await until('answered', call, (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes('9am')), 30_000)
  await s.console('POST', '/clock/advance', { ms: 16 * SEC })
  const done = await until('analysed', call, (r) => r.body.analysedAt !== null, 20_000)
  expect(done.body.transcript.map((l: any) => [l.speaker, l.text])).toEqual([
    ['agent', 'Hello Sam, this is Ava from Bright Smile.'],
    ['customer', 'When are you open?'],
    ['agent', 'We are open from 9am to 5pm, Monday to Friday.'],
  ])
  expect(done.body.summary).toBe('Ava called the customer. The customer asked "When are you open?" and Ava replied "We are open from 9am to 5pm, Monday to Friday." The call ended after that.')
}, 60_000)
