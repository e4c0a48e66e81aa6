import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { AnthropicChatModel, type AnthropicOptions } from '../../../src/providers/llm/anthropic'
import { ANTHROPIC_DEFAULT_MAX_TOKENS, CONVERSATION_START } from '../../../src/providers/llm/anthropic-wire'
import { type ChatMessage, complete, type LlmEvent, type ToolSpec } from '../../../src/providers/llm/port'
import { type FakeAnthropic, startAnthropicFake } from '../../fakes/anthropic'
import { collect, failure, textOf } from './helpers'

const KEY = 'sk-ant-api03-test-0123456789'
let fake: FakeAnthropic
const model = (o: Partial<AnthropicOptions> = {}) => new AnthropicChatModel({ model: 'claude-sonnet-4-5', apiKey: KEY, baseUrl: fake.baseUrl, idleTimeoutMs: 300, headersTimeoutMs: 300, ...o })
const hello: ChatMessage[] = [{ role: 'user', content: 'Hello' }]
const searchTool: ToolSpec = { name: 'search_knowledge', description: 'Search', parameters: { type: 'object', properties: { query: { type: 'string' } } } }
const last = () => fake.requests[fake.requests.length - 1]

beforeAll(() => {
  fake = startAnthropicFake({
    apiKey: KEY,
    modelsPageSize: 2,
    models: [
      { id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1' },
      { id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' },
      { id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' },
    ],
  })
})
afterAll(() => fake.stop())

describe('Anthropic adapter: streaming', () => {
  test('streams text deltas and ends with usage (cache reads count as input)', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['Hi', ' there', '.'] }], usage: { input_tokens: 30, cache_read_input_tokens: 5, output_tokens: 4 } })
    const evs = await collect(model(), { messages: hello })
    expect(evs).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'text', text: ' there' },
      { type: 'text', text: '.' },
      { type: 'done', finishReason: 'stop', usage: { inputTokens: 35, outputTokens: 4 } },
    ])
  })

  test('request shape: headers, top-level system, tools, tool results in a user turn', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['ok'] }] })
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Asha.' },
      { role: 'system', content: 'Greeting: Hi!' },
      { role: 'assistant', content: 'Hi! How can I help?' },
      { role: 'user', content: 'Refunds?' },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [
          { id: 'toolu_1', name: 'search_knowledge', arguments: { query: 'refunds' } },
          { id: 'toolu_2', name: 'escalate', arguments: {} },
        ],
      },
      { role: 'tool', content: '{"passages":[]}', toolCallId: 'toolu_1', name: 'search_knowledge' },
      { role: 'tool', content: 'queued', toolCallId: 'toolu_2' },
      { role: 'user', content: 'and?' },
    ]
    await collect(model(), { messages, tools: [searchTool], temperature: 1.6 })
    const r = last()
    expect(r).toMatchObject({ method: 'POST', path: '/v1/messages' })
    expect(r.headers['x-api-key']).toBe(KEY)
    expect(r.headers['anthropic-version']).toBe('2023-06-01')
    expect(r.headers.authorization).toBeUndefined()
    expect(r.body).toEqual({
      model: 'claude-sonnet-4-5',
      stream: true,
      max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
      temperature: 1,
      system: 'You are Asha.\n\nGreeting: Hi!',
      tools: [{ name: 'search_knowledge', description: 'Search', input_schema: searchTool.parameters }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: CONVERSATION_START }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hi! How can I help?' }] },
        { role: 'user', content: [{ type: 'text', text: 'Refunds?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'search_knowledge', input: { query: 'refunds' } },
            { type: 'tool_use', id: 'toolu_2', name: 'escalate', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"passages":[]}' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'queued' },
            { type: 'text', text: 'and?' },
          ],
        },
      ],
    })
  })

  test('maxTokens and temperature pass through; no system key without a system prompt', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['ok'] }] })
    await collect(model(), { messages: hello, maxTokens: 200, temperature: 0.3 })
    expect(last().body).toMatchObject({ max_tokens: 200, temperature: 0.3 })
    expect('system' in last().body).toBe(false)
    expect('tools' in last().body).toBe(false)
  })

  test('assembles tool_use input from input_json_delta fragments, after text', async () => {
    fake.reply({
      kind: 'stream',
      blocks: [
        { text: ['One moment.'] },
        { toolUse: { id: 'toolu_9', name: 'search_knowledge', json: ['', '{"query": "opening', ' hours"}'] } },
        { toolUse: { id: 'toolu_10', name: 'escalate', json: [] } },
      ],
    })
    const evs = await collect(model(), { messages: hello, tools: [searchTool] })
    expect(evs).toEqual([
      { type: 'text', text: 'One moment.' },
      { type: 'tool_call', id: 'toolu_9', name: 'search_knowledge', arguments: { query: 'opening hours' } },
      { type: 'tool_call', id: 'toolu_10', name: 'escalate', arguments: {} },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 12, outputTokens: 6 } },
    ])
  })

  test('byte stream cut into 3-byte pieces parses the same', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['Ça va ', '✓'] }], splitBytes: 3 })
    expect(textOf(await collect(model(), { messages: hello }))).toBe('Ça va ✓')
  })

  test('stop reasons: max_tokens → length (cut tool call dropped), refusal → error', async () => {
    fake.reply(
      { kind: 'stream', blocks: [{ text: ['Long'] }, { toolUse: { id: 't', name: 'search_knowledge', json: ['{"query": "ab'] } }], stopReason: 'max_tokens' },
      { kind: 'stream', blocks: [{ text: ['No.'] }], stopReason: 'refusal' },
      { kind: 'stream', blocks: [{ text: ['Done'] }], stopReason: 'stop_sequence' },
    )
    expect(await complete(model(), { messages: hello })).toMatchObject({ text: 'Long', toolCalls: [], finishReason: 'length' })
    expect((await complete(model(), { messages: hello })).finishReason).toBe('error')
    expect((await complete(model(), { messages: hello })).finishReason).toBe('stop')
  })

  test('listModels follows pages and keeps display names', async () => {
    expect(await model().listModels()).toEqual([
      { id: 'claude-opus-4-1', name: 'Claude Opus 4.1' },
      { id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5' },
      { id: 'claude-haiku-4-5', name: 'Claude Haiku 4.5' },
    ])
    const pages = fake.requests.filter((r) => r.path === '/v1/models')
    expect(pages.map((r) => r.query.after_id ?? '(first page)')).toEqual(['(first page)', 'claude-sonnet-4-5'])
    expect(pages[0].headers['anthropic-version']).toBe('2023-06-01')
  })
})

describe('Anthropic adapter: failures', () => {
  test('401 authentication_error: auth, never the key', async () => {
    const wrong = 'sk-ant-api03-wrong-abcdefgh'
    const e = await failure(model({ apiKey: wrong }), { messages: hello })
    expect(e).toMatchObject({ kind: 'auth', status: 401, provider: 'anthropic' })
    expect(e.message).toContain('invalid x-api-key')
    expect(e.message).not.toContain(wrong)
    expect(
      (
        await model({ apiKey: wrong })
          .listModels()
          .catch((x) => x)
      ).kind,
    ).toBe('auth')
  })

  test('HTTP errors map by status; Retry-After kept', async () => {
    const cases = [
      { status: 429, type: 'rate_limit_error', kind: 'rate_limit', headers: { 'retry-after': '12' } },
      { status: 500, type: 'api_error', kind: 'unavailable' },
      { status: 529, type: 'overloaded_error', kind: 'unavailable' },
      { status: 400, type: 'invalid_request_error', kind: 'bad_request' },
      { status: 404, type: 'not_found_error', kind: 'bad_request' },
      { status: 403, type: 'permission_error', kind: 'auth' },
    ] as const
    for (const c of cases) {
      fake.reply({ kind: 'error', status: c.status, type: c.type, message: `vendor says ${c.type}`, headers: 'headers' in c ? c.headers : undefined })
      const e = await failure(model(), { messages: hello })
      expect(e).toMatchObject({ kind: c.kind, status: c.status })
      expect(e.message).toContain(`vendor says ${c.type}`)
      if (c.status === 429) expect(e.retryAfterMs).toBe(12_000)
    }
  })

  test('error events mid-stream are mapped by their type', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['Hel'] }], errorEvent: { type: 'overloaded_error', message: 'Overloaded' } })
    const e = await failure(model(), { messages: hello })
    expect(e.kind).toBe('unavailable')
    expect(e.message).toContain('Overloaded')
    fake.reply({ kind: 'stream', errorEvent: { type: 'rate_limit_error', message: 'slow down' } })
    expect((await failure(model(), { messages: hello })).kind).toBe('rate_limit')
  })

  test('a stream cut before message_stop is a protocol error and emits no tool call', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['Hi'] }, { toolUse: { id: 't', name: 'escalate', json: ['{}'] } }], cut: true })
    const seen: LlmEvent[] = []
    const e = await failure(model(), { messages: hello }, seen)
    expect(e.kind).toBe('protocol')
    expect(e.message).toContain('message_stop')
    expect(seen.map((x) => x.type)).toEqual(['text'])
    fake.reply({ kind: 'stream', blocks: [{ text: ['a', 'b', 'c'] }], cut: 4 })
    expect((await failure(model(), { messages: hello })).kind).toBe('protocol')
  })

  test('tool input that is not valid JSON is a protocol error', async () => {
    fake.reply({ kind: 'stream', blocks: [{ toolUse: { id: 't', name: 'search_knowledge', json: ['{"query": ', '}'] } }] })
    const e = await failure(model(), { messages: hello })
    expect(e.kind).toBe('protocol')
    expect(e.message).toContain('search_knowledge')
  })

  test('a stall longer than the idle timeout is a timeout', async () => {
    // The stream would go on after 5 s: only the 150 ms idle timeout can end it as a timeout.
    fake.reply({ kind: 'stream', blocks: [{ text: ['a', 'b'] }], stall: { afterFrames: 4, ms: 5000 } })
    const seen: LlmEvent[] = []
    const e = await failure(model({ idleTimeoutMs: 150 }), { messages: hello }, seen)
    expect(e.kind).toBe('timeout')
    expect(e.message).toContain('went silent for more than 150 ms')
    expect(seen).toEqual([{ type: 'text', text: 'a' }])
  })

  test('no headers in time is a timeout', async () => {
    // The fake's hang ends in a 504 timeout_error (also a timeout): the message tells ours apart.
    fake.reply({ kind: 'hang', ms: 5000 })
    const e = await failure(model(), { messages: hello, timeoutMs: 120 })
    expect(e.kind).toBe('timeout')
    expect(e.message).toContain('did not start answering within 120 ms')
  })

  test('abort via signal', async () => {
    fake.reply({ kind: 'stream', blocks: [{ text: ['a', 'b'] }], stall: { afterFrames: 4, ms: 5000 } })
    const ctl = new AbortController()
    const run = failure(model({ idleTimeoutMs: 10_000 }), { messages: hello, signal: ctl.signal })
    setTimeout(() => ctl.abort(), 80)
    expect((await run).kind).toBe('aborted')
  })

  test('a missing key is refused before any request', () => {
    expect(() => new AnthropicChatModel({ model: 'x', apiKey: '' })).toThrow(/API key/)
  })
})
