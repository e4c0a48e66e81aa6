/**
 * Persona callers end to end: a scenario's caller is a persona and a goal, played by the agent's
 * own vendor model (here OpenAI's wire protocol, a local fake at OPENAI_BASE_URL). Each caller
 * line is one request (temperature 0, the run's seed, a token cap) reading the conversation so
 * far; the model hangs up with `[hang up]` once the goal is met, and the scenario is judged as a
 * scripted one is. A model that fails fails the scenario with its reason; an agent on the `local`
 * model cannot run a persona scenario at all.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PERSONA_MAX_TOKENS } from '../../src/features/simulations/persona-caller'
import { type FakeOpenAI, type OpenAIReply, type RecordedRequest, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { runSuite } from '../support/simulations'

const KEY = 'sk-persona-caller-0123456789'
let fake: FakeOpenAI
let s: TestServer
let dev: { id: string; key: string }
let agent: string
/** While set, answers requests by what they ask (a phone call's agent also answers partial words early). */
let route: ((r: RecordedRequest) => OpenAIReply | undefined) | null = null

beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY, replyFor: (r) => route?.(r) })
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl, STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' })
  dev = await s.developer({ plan: 'scale', name: 'Persona sims' })
  agent = (await s.agent(dev.key, { name: 'Bean There', model: 'gpt-4o-mini', greeting: 'Hi, this is Bean There. How can I help?', voice: { answersCalls: true } })).id
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

const api = (method: string, path: string, body?: unknown) => s.api(method, path, { key: dev.key, body })
const say = (text: string): OpenAIReply => ({ kind: 'stream', text: text.match(/\s*\S+/g) ?? [] })
/** The requests that asked for a caller's line (the agent's own replies are the others). */
const callerAsks = () => fake.requests.filter((r) => String(r.body?.messages?.[0]?.content ?? '').includes('You are playing a customer'))

const PERSONA = { persona: 'Priya, a regular customer who is in a hurry', goal: 'find out what time the shop opens on Saturday' }

async function suiteOf(scenario: Record<string, unknown>, agentId = agent): Promise<string> {
  const made = await api('POST', '/simulations/scenarios', scenario)
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  const suite = await api('POST', '/simulations/suites', { name: String(scenario.name), agent: agentId, scenarios: [made.body.id] })
  expect(suite.status).toBe(201)
  return suite.body.id
}

const runToEnd = (suiteId: string) => runSuite(s, dev.key, suiteId, { target: 'draft', seed: 7 }, { poll: { withinMs: 90_000, everyMs: 100 } })

describe('persona callers', () => {
  test('a scenario shows its persona caller as written', async () => {
    const made = await api('POST', '/simulations/scenarios', { name: 'shown', channel: 'web', caller: { ...PERSONA, maxTurns: 4, opening: 'Hi there!' } })
    expect(made.status).toBe(201)
    expect(made.body.caller).toEqual({ ...PERSONA, maxTurns: 4, opening: 'Hi there!' })
    expect((await api('GET', `/simulations/scenarios/${made.body.id}`)).body.caller).toEqual(made.body.caller)
  })

  test('on web chat: the model writes each line from the chat so far, hangs up once its goal is met, and the scenario passes', async () => {
    const suite = await suiteOf({
      name: 'Saturday hours, a persona',
      channel: 'web',
      caller: PERSONA,
      expectations: [
        { kind: 'says', text: 'open at 7' },
        { kind: 'ended', by: 'caller' },
      ],
    })
    const before = fake.requests.length
    fake.reply(say('Hi, what time do you open on Saturday?'), say('We open at 7 am on Saturdays.'), say('Great, thanks. Bye! [hang up]'), say('You are welcome, see you Saturday!'))
    const run = await runToEnd(suite)
    const [result] = run.results
    expect(result.status, JSON.stringify(result)).toBe('passed')
    expect(result.transcript.map((l: any) => [l.speaker, l.text])).toEqual([
      ['agent', 'Hi, this is Bean There. How can I help?'],
      ['customer', 'Hi, what time do you open on Saturday?'],
      ['agent', 'We open at 7 am on Saturdays.'],
      ['customer', 'Great, thanks. Bye!'],
      ['agent', 'You are welcome, see you Saturday!'],
    ])
    const asks = callerAsks().filter((r) => fake.requests.indexOf(r) >= before)
    expect(asks).toHaveLength(2)
    for (const ask of asks) {
      expect(ask.body.temperature).toBe(0)
      expect(ask.body.seed).toBe(7)
      expect(ask.body.max_completion_tokens).toBe(PERSONA_MAX_TOKENS)
      expect(ask.body.messages[0].content).toContain(PERSONA.persona)
      expect(ask.body.messages[0].content).toContain(PERSONA.goal)
    }
    expect(asks[0]!.body.messages[1].content).toContain('Agent: Hi, this is Bean There. How can I help?')
    expect(asks[1]!.body.messages[1].content).toContain('You: Hi, what time do you open on Saturday?\nAgent: We open at 7 am on Saturdays.')
  }, 120_000)

  test('maxTurns ends a caller that never hangs up; an opening is said word for word, without asking the model', async () => {
    const suite = await suiteOf({ name: 'two turns', channel: 'chatapp', caller: { ...PERSONA, maxTurns: 2, opening: 'Hello!' } })
    const before = fake.requests.length
    fake.reply(say('Hi, how can I help?'), say('What time do you open on Saturday?'), say('At 7 am.'))
    const run = await runToEnd(suite)
    const [result] = run.results
    expect(result.status, JSON.stringify(result)).toBe('passed')
    expect(result.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)).toEqual(['Hello!', 'What time do you open on Saturday?'])
    expect(callerAsks().filter((r) => fake.requests.indexOf(r) >= before)).toHaveLength(1)
  }, 120_000)

  test('a caller model that fails (500) fails the scenario, saying why; never a pass', async () => {
    const suite = await suiteOf({ name: 'the model fails', channel: 'web', caller: PERSONA, expectations: [{ kind: 'neverSays', text: 'refund' }] })
    fake.reply(say('Hi, what time do you open on Saturday?'), say('We open at 7 am.'), {
      kind: 'error',
      status: 500,
      message: 'The server had an error while processing your request.',
      type: 'server_error',
    })
    const run = await runToEnd(suite)
    const [result] = run.results
    expect(run.passed).toBe(false)
    expect(result.status).toBe('failed')
    expect(result.error).toStartWith('the caller’s model (openai gpt-4o-mini) failed:')
    expect(result.error).toContain('The server had an error while processing your request.')
    expect(result.expectations).toEqual([])
  }, 120_000)

  test('on the phone: the sandbox callee speaks each line as the model writes it, and the call passes', async () => {
    const suite = await suiteOf({
      name: 'Saturday hours by phone, a persona',
      caller: PERSONA,
      expectations: [
        { kind: 'says', text: 'open at 7' },
        { kind: 'ended', by: 'caller' },
      ],
    })
    const before = fake.requests.length
    // One sentence a line: the voice path may take a caller's pause between sentences for the end of its turn.
    // By what is asked: the caller's model by the agent's latest line, the agent's by the caller's.
    const last = (r: RecordedRequest) => String(r.body?.messages?.at(-1)?.content ?? '')
    route = (r) => {
      const asked = last(r)
      if (String(r.body?.messages?.[0]?.content).includes('You are playing a customer')) {
        if (asked.includes('open at 7')) return say('That is all I needed to know. [hang up]')
        return say('Hi, what time do you open on Saturday?')
      }
      if (asked === 'Hi, what time do you open on Saturday?') return say('We open at 7 am on Saturdays.')
      if (asked === 'That is all I needed to know.') return say('You are welcome, goodbye!')
      return say('Sorry, could you say that again?')
    }
    const run = await runToEnd(suite).finally(() => {
      route = null
    })
    const [result] = run.results
    expect(result.status, JSON.stringify(result)).toBe('passed')
    expect(result.call.id).toStartWith('out_')
    expect(result.transcript.map((l: any) => [l.speaker, l.text])).toEqual([
      ['agent', 'Hi, this is Bean There. How can I help?'],
      ['customer', 'Hi, what time do you open on Saturday?'],
      ['agent', 'We open at 7 am on Saturdays.'],
      ['customer', 'That is all I needed to know.'],
      ['agent', 'You are welcome, goodbye!'],
    ])
    const asks = callerAsks().filter((r) => fake.requests.indexOf(r) >= before)
    expect(asks).toHaveLength(2)
    expect(asks[1]!.body.messages[1].content).toContain('Agent: We open at 7 am on Saturdays.')
  }, 120_000)

  test('on the phone, a caller model that fails hangs the caller up and fails the call with the reason', async () => {
    const suite = await suiteOf({ name: 'the phone model fails', caller: PERSONA, expectations: [{ kind: 'ended', by: 'caller' }] })
    fake.reply({ kind: 'error', status: 500, message: 'The server had an error while processing your request.', type: 'server_error' })
    const run = await runToEnd(suite)
    const [result] = run.results
    expect(result.status, JSON.stringify(result)).toBe('failed')
    expect(result.error).toStartWith('the caller’s model (openai gpt-4o-mini) failed:')
    expect(result.expectations).toEqual([])
    expect(result.transcript.filter((l: any) => l.speaker === 'customer')).toEqual([])
  }, 120_000)

  test('an agent on the local model cannot run a persona scenario: 409 naming caller.persona', async () => {
    const local = (await s.agent(dev.key, { name: 'Offline', model: 'local' })).id
    const suite = await suiteOf({ name: 'persona on local', channel: 'web', caller: PERSONA }, local)
    const r = await api('POST', `/simulations/suites/${suite}/runs`, { target: 'draft' })
    expect(r.status).toBe(409)
    expect(r.body.error).toContain('has a caller.persona, played by the agent’s model')
    expect(r.body.error).toContain('runs on the local model, which plays scripted callers only')
  })
})
