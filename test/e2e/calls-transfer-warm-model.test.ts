/**
 * A warm transfer's brief written by the agent's vendor model, end to end on the sandbox network:
 * the agent runs on an OpenAI-protocol model (a local fake at OPENAI_BASE_URL); asked by hand to
 * transfer, the service asks the model for a summary of the call so far and the person hears it
 * after the fixed opening. A model that does not answer within the deadline gives way to the
 * template, so the person is briefed all the same and the transfer goes on. And the model's own
 * `transfer_call` over the OpenAI wire: its reply is spoken whole, then the brief is written.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { callsFeature } from '../../src/features/calls'
import { BRIEF_DEADLINE_MS, BRIEF_MAX_TOKENS } from '../../src/features/calls/control/brief-writer'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KEY = 'sk-warm-brief-model-0123456789'
const MANAGER = '+14155550977'
let fake: FakeOpenAI
let s: TestServer
let dev: { id: string; key: string }
beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY })
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl, STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  dev = await s.developer({ plan: 'scale' })
  const agent = (
    await s.agent(dev.key, {
      name: 'Front desk',
      model: 'gpt-4o-mini',
      voice: { answersCalls: true },
      transfers: [{ name: 'Manager', phoneNumber: MANAGER, whenToUse: 'billing disputes', mode: 'warm' }],
    })
  ).id
  expect((await s.console('POST', `/workspaces/${dev.id}/phone-numbers`, { number: '+14155550900', source: 'rented', agent })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(MANAGER)}`, { pickup: 'answer', ringMs: 0, lines: ['Manager here.'], hangupAfterMs: null })).status).toBe(200)
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

const call = (id: string) => s.api('GET', `/calls/${id}`, { key: dev.key })
const heard = (callRef: string) => s.server.services.of(callsFeature).sandbox.transfers.get(callRef)?.heard ?? []
/** What the person has heard once the leg answers: the sandbox rings it on a timer, so the 202 can come first. */
const heardOnce = (callRef: string) =>
  until(
    'the person to hear the brief',
    () => heard(callRef),
    (h) => h.length > 0,
    10_000,
  )
const briefRequests = () => fake.requests.filter((r) => String(r.body?.messages?.[0]?.content ?? '').includes('to hand the call over'))

/** A call the agent has answered once (its reply scripted), ready to be transferred by hand. */
async function talking(phone: string, name?: string): Promise<string> {
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone, ...(name ? { name } : {}) })).status).toBe(201)
  expect((await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, lines: ['I was charged twice this month.'], hangupAfterMs: null })).status).toBe(200)
  fake.reply({ kind: 'stream', text: ['I can see both charges and I have flagged them.'] })
  const placed = await s.api('POST', '/calls', { key: dev.key, body: { to: phone, purpose: 'Hello, this is the front desk returning your call.' } })
  expect(placed.status, JSON.stringify(placed.body)).toBe(202)
  const id = placed.body.id
  await until(
    'the agent answered the caller',
    () => call(id),
    (r) => r.body.transcript.some((l: any) => l.speaker === 'agent' && l.text.includes('flagged')),
    30_000,
  )
  return id
}

test("the model's summary is what the person hears, after the fixed opening", async () => {
  const id = await talking('+14155550901', 'Dana Reyes')
  fake.reply({ kind: 'stream', text: ['The caller was charged twice this month. ', 'The agent has flagged both charges.'] })
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Manager' } })
  expect(asked.status).toBe(202)
  expect(await heardOnce(asked.body.callRef)).toEqual([
    'Hello, this is Front desk. I have Dana Reyes on the line for Manager. The caller was charged twice this month. The agent has flagged both charges.',
  ])
  const [request] = briefRequests()
  expect(request!.body.max_tokens ?? request!.body.max_completion_tokens).toBe(BRIEF_MAX_TOKENS)
  expect(request!.body.messages[1].content).toContain('Customer: I was charged twice this month.')
  await until(
    'put through',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    30_000,
  )
}, 90_000)

test('a model that does not answer by the deadline: the person hears the template and the transfer goes on', async () => {
  const id = await talking('+14155550902')
  fake.reply({ kind: 'hang', ms: 60_000 })
  const started = Date.now()
  const asked = await s.api('POST', `/calls/${id}/transfer`, { key: dev.key, body: { destination: 'Manager' } })
  expect(asked.status).toBe(202)
  // It waited for the model (the deadline), then went on without it: never the model's hang.
  expect(Date.now() - started).toBeGreaterThanOrEqual(BRIEF_DEADLINE_MS - 100)
  expect(await heardOnce(asked.body.callRef)).toEqual(['Hello, this is Front desk. I have a caller from 1 4 1 5 5 5 5 0 9 0 2 on the line for Manager. They said: "I was charged twice this month."'])
  expect(briefRequests()).toHaveLength(2)
  fake.wake()
  await until(
    'put through',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    30_000,
  )
}, 90_000)

test("the model's own transfer_call: its words are spoken, then it writes the brief the person hears", async () => {
  const phone = '+14155550903'
  expect((await s.console('POST', `/workspaces/${dev.id}/contacts`, { phone, name: 'Sam Lee' })).status).toBe(201)
  expect(
    (await s.console('PUT', `/sandbox/phones/${encodeURIComponent(phone)}`, { pickup: 'answer', ringMs: 0, lines: ['I was charged twice, can I talk to a manager?'], hangupAfterMs: null })).status,
  ).toBe(200)
  // The reply to the caller calls the tool and is finished (spoken whole); then the transfer runs and the model writes the brief.
  fake.reply(
    { kind: 'stream', text: ['Of course, let me get my manager. '], toolCalls: [{ id: 'call_t1', name: 'transfer_call', args: ['{"destination":', '"Manager"}'] }] },
    { kind: 'stream', text: ['Please hold while I connect you.'] },
    { kind: 'stream', text: ['The caller was charged twice and asked for a manager.'] },
  )
  const id = (await s.api('POST', '/calls', { key: dev.key, body: { to: phone, purpose: 'Hello, this is the front desk returning your call.' } })).body.id
  const joined = await until(
    'put through by the agent',
    () => call(id),
    (r) => r.body.transfer?.answeredAt != null,
    30_000,
  )
  expect(joined.body.transfer).toMatchObject({ to: 'Manager', mode: 'warm', by: 'agent' })
  expect(await heardOnce(joined.body.callRef)).toEqual(['Hello, this is Front desk. I have Sam Lee on the line for Manager. The caller was charged twice and asked for a manager.'])
  expect(joined.body.transcript.some((l: any) => l.speaker === 'agent' && l.text === 'Of course, let me get my manager. Please hold while I connect you.')).toBe(true)
  // The model was offered transfer_call with the destination's name.
  const offered = fake.requests.find((r) => r.body?.tools?.some((t: any) => t.function.name === 'transfer_call'))
  expect(offered!.body.tools.find((t: any) => t.function.name === 'transfer_call').function.parameters.properties.destination.enum).toEqual(['Manager'])
}, 90_000)
