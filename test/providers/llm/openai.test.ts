import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { OpenAIChatModel, type OpenAIOptions, REASONING_COMPLETION_TOKENS } from '../../../src/providers/llm/openai'
import { type ChatMessage, complete, type LlmEvent, type ToolSpec } from '../../../src/providers/llm/port'
import { type FakeOpenAI, startOpenAIFake } from '../../fakes/openai'
import { collect, failure, textOf } from './helpers'

const KEY = 'sk-test-0123456789abcdef'
let fake: FakeOpenAI
const model = (o: Partial<OpenAIOptions> = {}) => new OpenAIChatModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: KEY, baseUrl: fake.baseUrl, idleTimeoutMs: 300, headersTimeoutMs: 300, ...o })
const hello: ChatMessage[] = [{ role: 'user', content: 'Hello' }]
const searchTool: ToolSpec = { name: 'search_knowledge', description: 'Search the knowledge base', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }
const lastBody = () => fake.requests[fake.requests.length - 1].body

beforeAll(() => {
  fake = startOpenAIFake({ apiKey: KEY, models: ['gpt-4o-mini', 'gpt-4.1'] })
})
afterAll(() => fake.stop())

describe('OpenAI adapter: streaming', () => {
  test('streams text in order and ends with usage', async () => {
    fake.reply({ kind: 'stream', text: ['Hel', 'lo', ' there.'], usage: { prompt_tokens: 21, completion_tokens: 3 } })
    const evs = await collect(model(), { messages: hello })
    expect(evs.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text)).toEqual(['Hel', 'lo', ' there.'])
    expect(evs[evs.length - 1]).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 21, outputTokens: 3 } })
  })

  test('sends the documented request shape', async () => {
    fake.reply({ kind: 'stream', text: ['ok'] })
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Refunds?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'search_knowledge', arguments: { query: 'refunds' } }] },
      { role: 'tool', content: '{"passages":[]}', toolCallId: 'call_1', name: 'search_knowledge' },
    ]
    await collect(model(), { messages, tools: [searchTool], temperature: 0.4, maxTokens: 300 })
    const r = fake.requests[fake.requests.length - 1]
    expect(r.method).toBe('POST')
    expect(r.path).toBe('/v1/chat/completions')
    expect(r.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(r.headers['content-type']).toContain('application/json')
    expect(r.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.4,
      max_completion_tokens: 300,
      tools: [{ type: 'function', function: { name: 'search_knowledge', description: 'Search the knowledge base', parameters: searchTool.parameters } }],
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Refunds?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search_knowledge', arguments: '{"query":"refunds"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"passages":[]}' },
      ],
    })
  })

  test('compatible servers get max_tokens, no tools key when none, and no auth without a key', async () => {
    const noAuth = startOpenAIFake()
    noAuth.reply({ kind: 'stream', text: ['ok'] })
    try {
      const m = new OpenAIChatModel({ provider: 'openai-compatible', model: 'llama3', baseUrl: noAuth.baseUrl })
      await collect(m, { messages: hello, maxTokens: 50 })
      const r = noAuth.requests[0]
      expect(r.headers.authorization).toBeUndefined()
      expect(r.body.max_tokens).toBe(50)
      expect(r.body.max_completion_tokens).toBeUndefined()
      expect('tools' in r.body).toBe(false)
      expect('temperature' in r.body).toBe(false)
    } finally {
      await noAuth.stop()
    }
  })

  test('reasoning models (o3, any o<digit>) get no temperature and the reasoning budget', async () => {
    for (const id of ['o3', 'o4-mini', 'o1']) {
      fake.reply({ kind: 'stream', text: ['ok'] })
      await collect(model({ model: id }), { messages: hello, temperature: 0.4, maxTokens: 300 })
      const body = lastBody()
      expect({ id, temperature: 'temperature' in body, max: body.max_completion_tokens, old: 'max_tokens' in body }).toEqual({ id, temperature: false, max: REASONING_COMPLETION_TOKENS, old: false })
    }
    expect(REASONING_COMPLETION_TOKENS).toBe(25_000)
    // Not reasoning models: the request's own values.
    for (const id of ['gpt-4o-mini', 'omni-moderation', 'gpt-4o']) {
      fake.reply({ kind: 'stream', text: ['ok'] })
      await collect(model({ model: id }), { messages: hello, temperature: 0.4, maxTokens: 300 })
      expect({ id, temperature: lastBody().temperature, max: lastBody().max_completion_tokens }).toEqual({ id, temperature: 0.4, max: 300 })
    }
    // A compatible server relaying o3 still gets the reasoning shape (o-series refuse max_tokens).
    fake.reply({ kind: 'stream', text: ['ok'] })
    await collect(model({ provider: 'openai-compatible', model: 'o3-mini' }), { messages: hello, temperature: 1.2, maxTokens: 300 })
    expect(lastBody()).toMatchObject({ max_completion_tokens: REASONING_COMPLETION_TOKENS })
    expect('temperature' in lastBody() || 'max_tokens' in lastBody()).toBe(false)
  })

  test('assembles tool calls from fragments by index, after the text', async () => {
    fake.reply({
      kind: 'stream',
      text: ['Let me check.'],
      toolCalls: [
        { id: 'call_a', name: 'search_knowledge', args: ['{"qu', 'ery": "ref', 'unds"}'] },
        { id: 'call_b', name: 'escalate', args: ['', '{}'] },
      ],
    })
    const evs = await collect(model(), { messages: hello, tools: [searchTool] })
    expect(evs).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_call', id: 'call_a', name: 'search_knowledge', arguments: { query: 'refunds' } },
      { type: 'tool_call', id: 'call_b', name: 'escalate', arguments: {} },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 10, outputTokens: 5 } },
    ])
  })

  test('parses a byte stream cut into 5-byte pieces, multi-byte text included', async () => {
    fake.reply({ kind: 'stream', text: ['Grüße ', '✓ ', '你好'], splitBytes: 5 })
    expect(textOf(await collect(model(), { messages: hello }))).toBe('Grüße ✓ 你好')
  })

  test('finish_reason length maps to length; content_filter to error', async () => {
    fake.reply({ kind: 'stream', text: ['cut'], finishReason: 'length' }, { kind: 'stream', text: [], finishReason: 'content_filter' })
    expect((await complete(model(), { messages: hello })).finishReason).toBe('length')
    expect((await complete(model(), { messages: hello })).finishReason).toBe('error')
  })

  test('a tool call cut by the token limit is dropped and reported as length', async () => {
    fake.reply({ kind: 'stream', toolCalls: [{ id: 'c', name: 'search_knowledge', args: ['{"query": "ref'] }], finishReason: 'length' })
    const r = await complete(model(), { messages: hello, tools: [searchTool] })
    expect(r).toMatchObject({ toolCalls: [], finishReason: 'length' })
  })

  test('complete() collects text, tool calls, finish and usage', async () => {
    fake.reply({ kind: 'stream', text: ['a', 'b'], toolCalls: [{ id: 'x', name: 'search_knowledge', args: ['{"query":"q"}'] }] })
    expect(await complete(model(), { messages: hello })).toEqual({
      text: 'ab',
      toolCalls: [{ id: 'x', name: 'search_knowledge', arguments: { query: 'q' } }],
      finishReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 5 },
    })
  })

  test('listModels reads GET /models', async () => {
    expect(await model().listModels()).toEqual([{ id: 'gpt-4o-mini' }, { id: 'gpt-4.1' }])
    expect(fake.requests[fake.requests.length - 1]).toMatchObject({ method: 'GET', path: '/v1/models' })
  })
})

describe('OpenAI adapter: failures', () => {
  test('401: auth, with the vendor message and never the key', async () => {
    const wrong = 'sk-wrong-key-99999999zzzz'
    const e = await failure(model({ apiKey: wrong }), { messages: hello })
    expect(e).toMatchObject({ kind: 'auth', status: 401, provider: 'openai' })
    expect(e.message).toContain('Incorrect API key provided')
    expect(e.message).not.toContain(wrong)
    expect(e.message).not.toContain('zzzz')
    expect(
      (
        await model({ apiKey: wrong })
          .listModels()
          .catch((x) => x)
      ).kind,
    ).toBe('auth')
  })

  test('429 keeps Retry-After; 500 unavailable; 400/404/422 bad_request with the vendor message', async () => {
    fake.reply({ kind: 'error', status: 429, message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '7' } })
    expect(await failure(model(), { messages: hello })).toMatchObject({ kind: 'rate_limit', status: 429, retryAfterMs: 7000 })
    fake.reply({ kind: 'error', status: 500, message: 'The server had an error', type: 'server_error' })
    const e500 = await failure(model(), { messages: hello })
    expect(e500).toMatchObject({ kind: 'unavailable', status: 500 })
    expect(e500.retryable).toBe(true)
    for (const status of [400, 404, 422]) {
      fake.reply({ kind: 'error', status, message: `Invalid value for 'temperature' (${status})` })
      const e = await failure(model(), { messages: hello })
      expect(e).toMatchObject({ kind: 'bad_request', status })
      expect(e.message).toContain(`Invalid value for 'temperature' (${status})`)
    }
  })

  test('a stream cut before [DONE] is a protocol error, not a short answer', async () => {
    fake.reply({ kind: 'stream', text: ['Hello'], cut: true })
    const seen: LlmEvent[] = []
    const e = await failure(model(), { messages: hello }, seen)
    expect(e.kind).toBe('protocol')
    expect(e.message).toContain('[DONE]')
    expect(seen).toEqual([{ type: 'text', text: 'Hello' }])
  })

  test('a stream cut mid-tool-call emits no tool call', async () => {
    fake.reply({ kind: 'stream', toolCalls: [{ id: 'c', name: 'search_knowledge', args: ['{"query":', '"x"}'] }], cut: 3 })
    const seen: LlmEvent[] = []
    expect((await failure(model(), { messages: hello }, seen)).kind).toBe('protocol')
    expect(seen).toEqual([])
  })

  test('tool arguments that are not JSON, or not an object, are protocol errors', async () => {
    fake.reply({ kind: 'stream', toolCalls: [{ id: 'c', name: 'search_knowledge', args: ['{"query": ', 'oops}'] }] })
    const e = await failure(model(), { messages: hello })
    expect(e.kind).toBe('protocol')
    expect(e.message).toContain('search_knowledge')
    fake.reply({ kind: 'stream', toolCalls: [{ id: 'c', name: 'search_knowledge', args: ['[1,2]'] }] })
    expect((await failure(model(), { messages: hello })).kind).toBe('protocol')
  })

  test('an error chunk mid-stream is mapped by its code', async () => {
    fake.reply({ kind: 'stream', text: ['partial'], errorChunk: { message: 'Overloaded', type: 'server_error' } })
    expect((await failure(model(), { messages: hello })).kind).toBe('unavailable')
    fake.reply({ kind: 'stream', errorChunk: { message: 'slow down', code: 'rate_limit_exceeded' } })
    expect((await failure(model(), { messages: hello })).kind).toBe('rate_limit')
  })

  test('a JSON answer where a stream was expected is a protocol error', async () => {
    fake.reply({ kind: 'json', body: { choices: [{ message: { content: 'hi' } }] } })
    expect((await failure(model(), { messages: hello })).kind).toBe('protocol')
  })

  test('silence between chunks longer than the idle timeout is a timeout', async () => {
    // The stream would go on after 5 s: only the 150 ms idle timeout can end it as a timeout.
    fake.reply({ kind: 'stream', text: ['a', 'b'], stall: { afterFrames: 2, ms: 5000 } })
    const seen: LlmEvent[] = []
    const e = await failure(model({ idleTimeoutMs: 150 }), { messages: hello }, seen)
    expect(e.kind).toBe('timeout')
    expect(e.message).toContain('went silent for more than 150 ms')
    expect(e.retryable).toBe(true)
    expect(seen).toEqual([{ type: 'text', text: 'a' }])
  })

  test('no response headers within the deadline is a timeout; request timeoutMs overrides', async () => {
    fake.reply({ kind: 'hang', ms: 5000 })
    expect((await failure(model({ headersTimeoutMs: 150 }), { messages: hello })).kind).toBe('timeout')
    // The hang ends in a 504 after 5 s, long before the 60 s headers timeout: a timeout here is the request's 100 ms.
    fake.reply({ kind: 'hang', ms: 5000 })
    const e = await failure(model({ headersTimeoutMs: 60_000 }), { messages: hello, timeoutMs: 100 })
    expect(e.kind).toBe('timeout')
    expect(e.message).toContain('did not start answering within 100 ms')
  })

  test('aborting the signal mid-stream ends it with aborted', async () => {
    fake.reply({ kind: 'stream', text: ['a', 'b'], stall: { afterFrames: 2, ms: 5000 } })
    const ctl = new AbortController()
    const seen: LlmEvent[] = []
    const m = model({ idleTimeoutMs: 10_000 })
    const run = failure(m, { messages: hello, signal: ctl.signal }, seen)
    setTimeout(() => ctl.abort(), 100)
    expect((await run).kind).toBe('aborted')
    expect(seen.map((e) => e.type)).toEqual(['text'])
  })

  test('an already-aborted signal sends nothing', async () => {
    const before = fake.requests.length
    const e = await failure(model(), { messages: hello, signal: AbortSignal.abort() })
    expect(e.kind).toBe('aborted')
    expect(fake.requests.length).toBe(before)
  })

  test('breaking out of the loop early is clean', async () => {
    fake.reply({ kind: 'stream', text: ['a', 'b'], stall: { afterFrames: 2, ms: 5000 } })
    for await (const ev of model({ idleTimeoutMs: 10_000 }).stream({ messages: hello })) {
      expect(ev).toEqual({ type: 'text', text: 'a' })
      break
    }
  })

  test('an unreachable server is unavailable', async () => {
    const dead = startOpenAIFake()
    const url = dead.baseUrl
    await dead.stop()
    const e = await failure(model({ baseUrl: url }), { messages: hello })
    expect(e.kind).toBe('unavailable')
    expect(e.message).toContain('127.0.0.1')
  })

  test('a redirect is refused and never followed (the key must not travel to another host)', async () => {
    let hits = 0
    const target = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        hits++
        return new Response('x')
      },
    })
    const redirector = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.redirect(`http://127.0.0.1:${target.port}/v1/chat/completions`, 307) })
    try {
      const e = await failure(model({ baseUrl: `http://127.0.0.1:${redirector.port}/v1` }), { messages: hello })
      expect(e).toMatchObject({ kind: 'bad_request', status: 307 })
      expect(hits).toBe(0)
    } finally {
      await Promise.all([target.stop(true), redirector.stop(true)])
    }
  })

  test('a connection reset mid-stream is unavailable (retryable)', async () => {
    const frame = 'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    const raw = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(s) {
          s.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n')
          s.write(`${frame.length.toString(16)}\r\n${frame}\r\n`)
          setTimeout(() => s.end(), 30)
        },
      },
    })
    try {
      const seen: LlmEvent[] = []
      const e = await failure(model({ baseUrl: `http://127.0.0.1:${raw.port}/v1` }), { messages: hello }, seen)
      expect(e.kind).toBe('unavailable')
      expect(e.message).toMatch(/^The connection to OpenAI broke/)
      expect(seen).toEqual([{ type: 'text', text: 'Hi' }])
    } finally {
      raw.stop(true)
    }
  })

  test('base URL policy: https anywhere, http only for loopback, no credentials', () => {
    expect(() => model({ baseUrl: 'http://api.example.com/v1' })).toThrow(/https/)
    expect(() => model({ baseUrl: 'http://10.0.0.8:8000/v1' })).toThrow(/https/)
    expect(() => model({ baseUrl: 'https://user:pw@example.com/v1' })).toThrow(/user name/)
    expect(() => model({ baseUrl: 'not a url' })).toThrow(/not a valid URL/)
    expect(() => model({ baseUrl: 'https://api.groq.com/openai/v1/' })).not.toThrow()
    expect(() => model({ baseUrl: 'http://localhost:11434/v1' })).not.toThrow()
    expect(() => model({ baseUrl: 'http://[::1]:8080/v1' })).not.toThrow()
  })
})
