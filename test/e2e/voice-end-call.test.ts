/**
 * The agent ends the call itself: an OpenAI-protocol model (a local fake at OPENAI_BASE_URL)
 * answers the callee with `end_call`; the pipeline speaks the reply, then hangs up. The call is
 * `completed` with `hangup: answered`, and the whole goodbye is in the transcript.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KEY = 'sk-voice-end-call-0123456789'
let fake: FakeOpenAI
let s: TestServer
beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY })
  // Speech stays on the sandbox doubles: only the model is OpenAI's protocol here.
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl, STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

test("the agent's end_call: the reply is spoken whole, then the call ends answered", async () => {
  const dev = await s.developer({ plan: 'scale' })
  const agent = (await s.agent(dev.key, { name: 'Closer', model: 'gpt-4o-mini', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550500', source: 'rented', agent })).status).toBe(201)
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone: '+14155550501' })).status).toBe(201)
  expect((await s.console('PUT', '/sandbox/phones/%2B14155550501', { pickup: 'answer', ringMs: 0, lines: ["That's all, thank you."], hangupAfterMs: null })).status).toBe(200)
  fake.reply({ kind: 'stream', text: ['Glad I could help. '], toolCalls: [{ id: 'call_1', name: 'end_call', args: ['{}'] }] })
  fake.reply({ kind: 'stream', text: ['Have a lovely day, goodbye.'] })
  fake.reply({ kind: 'stream', text: ['The caller said that was all; the agent said goodbye and ended the call.'] })
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: '+14155550501', purpose: 'Hi, just checking in on your order.' } })).body.id
  const done = await until(
    'ended by the agent',
    () => s.api('GET', `/calls/${id}`, { key: dev.key }),
    (r) => r.body.status === 'completed' && r.body.analysedAt !== null,
    30_000,
  )
  expect(done.body.hangup).toBe('answered')
  expect(done.body.transcript.map((l: any) => [l.speaker, l.text])).toEqual([
    ['agent', 'Hi, just checking in on your order.'],
    ['customer', "That's all, thank you."],
    ['agent', 'Glad I could help. Have a lovely day, goodbye.'],
  ])
  // The model was offered end_call on this voice conversation.
  expect(fake.requests[0]!.body.tools.map((t: any) => t.function.name)).toContain('end_call')
}, 45_000)
