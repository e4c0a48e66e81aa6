/**
 * A local Anthropic Messages API server speaking the real streaming wire format: named events
 * `message_start`, `content_block_start` (text | tool_use), `ping`, `content_block_delta`
 * (`text_delta` | `input_json_delta`), `content_block_stop`, `message_delta` (stop_reason, usage),
 * `message_stop`, and `error` events. HTTP errors use `{ type: 'error', error: { type, message } }`.
 * Like the real API it refuses a missing/wrong `x-api-key` (401), a missing `anthropic-version`
 * or `max_tokens` (400). Tests script replies in order and read back what was sent.
 */
import { type FakeServerBase, type RecordedRequest, record, Sleeper, type Stall, sseBody } from './openai'

export type AnthropicBlock = { text: string[] } | { toolUse: { id: string; name: string; json: string[] } }

export type AnthropicReply =
  | {
      kind: 'stream'
      blocks?: AnthropicBlock[]
      /** Default: `tool_use` when a block is a tool call, else `end_turn`. */
      stopReason?: string
      usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number }
      /** true: drop `message_stop`; a number: send only that many events. */
      cut?: true | number
      stall?: Stall
      /** An `error` event after `message_start` and the blocks; the stream ends there. */
      errorEvent?: { type: string; message: string }
      splitBytes?: number
    }
  | { kind: 'error'; status: number; type: string; message: string; headers?: Record<string, string> }
  | { kind: 'hang'; ms: number }

export interface FakeAnthropic extends FakeServerBase {
  /** Base URL without `/v1`, as the adapter takes it. */
  baseUrl: string
  reply(...replies: AnthropicReply[]): void
}

export interface FakeAnthropicOptions {
  apiKey: string
  models?: { id: string; display_name: string }[]
  /** Page size cap for GET /v1/models (to exercise `has_more`). */
  modelsPageSize?: number
}

const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

const errorBody = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_fake' }), {
    status,
    headers: { 'content-type': 'application/json', 'request-id': 'req_fake', ...headers },
  })

export function startAnthropicFake(opts: FakeAnthropicOptions): FakeAnthropic {
  const queue: AnthropicReply[] = []
  const requests: RecordedRequest[] = []
  const sleeper = new Sleeper()
  let n = 0

  async function messages(rec: RecordedRequest): Promise<Response> {
    if (typeof rec.body?.max_tokens !== 'number') return errorBody(400, 'invalid_request_error', 'max_tokens: Field required')
    const r = queue.shift() ?? { kind: 'error', status: 500, type: 'api_error', message: 'The fake has no scripted reply for this request.' }
    if (r.kind === 'hang') {
      await sleeper.sleep(r.ms)
      return errorBody(504, 'timeout_error', 'hung')
    }
    if (r.kind === 'error') return errorBody(r.status, r.type, r.message, r.headers)
    const u = r.usage ?? { input_tokens: 12, output_tokens: 6 }
    const frames = [
      event('message_start', {
        type: 'message_start',
        message: {
          id: `msg_fake${++n}`,
          type: 'message',
          role: 'assistant',
          content: [],
          model: rec.body.model,
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: u.input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cache_read_input_tokens ?? 0, output_tokens: 1 },
        },
      }),
    ]
    ;(r.blocks ?? []).forEach((b, index) => {
      if ('text' in b) {
        frames.push(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }))
        if (index === 0) frames.push(event('ping', { type: 'ping' }))
        for (const t of b.text) frames.push(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } }))
      } else {
        frames.push(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.toolUse.id, name: b.toolUse.name, input: {} } }))
        if (index === 0) frames.push(event('ping', { type: 'ping' }))
        for (const j of b.toolUse.json) frames.push(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: j } }))
      }
      frames.push(event('content_block_stop', { type: 'content_block_stop', index }))
    })
    if (r.errorEvent) {
      frames.push(event('error', { type: 'error', error: r.errorEvent }))
      return sseBody(frames, sleeper, { stall: r.stall, splitBytes: r.splitBytes })
    }
    const hasTool = (r.blocks ?? []).some((b) => 'toolUse' in b)
    frames.push(
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: r.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'), stop_sequence: null },
        usage: { output_tokens: u.output_tokens },
      }),
    )
    frames.push(event('message_stop', { type: 'message_stop' }))
    const cutAt = r.cut === true ? frames.length - 1 : r.cut
    return sseBody(frames, sleeper, { stall: r.stall, splitBytes: r.splitBytes, cutAt })
  }

  function models(url: URL): Response {
    const all = (opts.models ?? [{ id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' }]).map((m) => ({
      type: 'model',
      id: m.id,
      display_name: m.display_name,
      created_at: '2025-09-29T00:00:00Z',
    }))
    const after = url.searchParams.get('after_id')
    const start = after ? all.findIndex((m) => m.id === after) + 1 : 0
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 20), opts.modelsPageSize ?? 1000)
    const page = all.slice(start, start + limit)
    return Response.json({ data: page, has_more: start + limit < all.length, first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null })
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0, // stalls are the point of some tests; Bun must not cut them first
    async fetch(req) {
      const url = new URL(req.url)
      const rec = await record(req, url)
      requests.push(rec)
      if (rec.headers['x-api-key'] !== opts.apiKey) return errorBody(401, 'authentication_error', 'invalid x-api-key')
      if (!rec.headers['anthropic-version']) return errorBody(400, 'invalid_request_error', 'anthropic-version: header is required')
      if (req.method === 'POST' && url.pathname === '/v1/messages') return messages(rec)
      if (req.method === 'GET' && url.pathname === '/v1/models') return models(url)
      return errorBody(404, 'not_found_error', `Not found: ${url.pathname}`)
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return {
    origin,
    baseUrl: origin,
    requests,
    reply: (...r) => void queue.push(...r),
    async stop() {
      sleeper.wakeAll()
      await server.stop(true)
    },
  }
}
