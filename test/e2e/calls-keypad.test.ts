/**
 * The keypad on the sandbox network, end to end: the callee presses keys (in-band tones in its
 * audio), the agent hears them as the caller's turn, the transcript holds them and the analysis
 * fills a field from them.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const SEC = 1_000
let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer({ STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale', name: 'Keypad' })
})
afterAll(() => s?.stop())

const store = (name: string) => s.server.services.store.collection<any>({ name, indexes: [] })

test('keys the callee presses reach the agent, the transcript and the fields', async () => {
  const agent = await s.agent(dev.key, {
    name: 'Billing',
    voice: { answersCalls: true },
    collectFields: [{ name: 'accountNumber', type: 'text', description: 'the account number' }],
  })
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155557700', source: 'rented', agent: agent.id })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155557701' })).status).toBe(201)
  await s.console('PUT', `/sandbox/phones/${encodeURIComponent('+14155557701')}`, { pickup: 'answer', ringMs: 0, lines: ['[keypad] 40521#'], hangupAfterMs: 60 * SEC })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155557701', purpose: 'Please key in your account number, then the hash key.' } })
  expect(placed.status).toBe(202)
  const tries = await store('call_tries')
  await until(
    'the keys heard and answered',
    async () => (await tries.find({ callId: placed.body.id }))[0]?.transcript ?? [],
    (t: any[]) => t.some((l) => l.speaker === 'customer') && t.at(-1).speaker === 'agent',
    30_000,
  )
  await s.console('POST', '/clock/advance', { ms: 61 * SEC })
  const done = await until(
    'analysed',
    () => s.api('GET', `/calls/${placed.body.id}`, { key: dev.key }),
    (r) => r.body.analysedAt != null,
    30_000,
  )
  expect(done.body.status).toBe('completed')
  const customer = done.body.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)
  expect(customer).toEqual(['[keypad] 40521#'])
  expect(done.body.fields).toEqual({ accountNumber: '40521' })
}, 90_000)
