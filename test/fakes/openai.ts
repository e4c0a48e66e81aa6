/**
 * A local OpenAI Chat Completions server (also its Azure OpenAI form) speaking the real streaming
 * wire format: `data: <chat.completion.chunk>` events, tool calls split into fragments by index,
 * the usage chunk with `choices: []` when `stream_options.include_usage` is set, `data: [DONE]`.
 * Errors use OpenAI's `{ error: { message, type, param, code } }` body (Azure's `{ error: { code,
 * message } }` on Azure paths). Tests script replies in order and read back what was sent.
 *
 * Also exports `sseBody`, the paced event-stream body both vendor fakes use.
 */

export interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string>
  headers: Record<string, string>
  body: any
}

export interface Stall {
  /** Frames sent before the pause. */
  afterFrames: number
  ms: number
}

export interface FakeToolCall {
  id: string
  name: string
  /** The arguments JSON text, in the fragments it is streamed in (need not be valid JSON). */
  args: string[]
}

export type OpenAIReply =
  | {
      kind: 'stream'
      text?: string[]
      toolCalls?: FakeToolCall[]
      /** Default: `tool_calls` when there are tool calls, else `stop`. */
      finishReason?: string
      usage?: { prompt_tokens: number; completion_tokens: number }
      /** true: drop the usage chunk and `[DONE]`; a number: send only that many frames. */
      cut?: true | number
      stall?: Stall
      /** An `{ error }` chunk after the text, as vLLM and proxies send mid-stream, then [DONE]. */
      errorChunk?: { message: string; type?: string; code?: string }
      /** Re-chunk the byte stream into pieces of this size (exercises the SSE parser). */
      splitBytes?: number
    }
  | { kind: 'error'; status: number; message?: string; type?: string; code?: string | null; headers?: Record<string, string> }
  /** Accept the request and send nothing (not even headers) for `ms`. */
  | { kind: 'hang'; ms: number }
  /** A plain JSON answer where a stream was expected (a server ignoring `stream: true`). */
  | { kind: 'json'; body: unknown }

export interface FakeServerBase {
  /** http://127.0.0.1:<port> */
  origin: string
  requests: RecordedRequest[]
  stop(): Promise<void>
}

export interface FakeOpenAI extends FakeServerBase {
  /** OpenAI-style base URL: `${origin}/v1`. */
  baseUrl: string
  /** Queue replies for the next chat requests, in order. */
  reply(...replies: OpenAIReply[]): void
  /** How many stalls and hangs are in progress. */
  stalled(): number
  /** Ends every stall and hang in progress: each carries on as if its time had passed. */
  wake(): void
}

export interface FakeOpenAIOptions {
  /** When set, requests must carry it (Bearer on /v1, `api-key` on Azure paths). */
  apiKey?: string
  models?: string[]
  /** Azure paths accept only this deployment. */
  deployment?: string
  /**
   * Streamed when nothing is scripted (default: a 500 saying so), a word per content chunk, so a
   * benchmark can run many turns without scripting each.
   */
  defaultReply?: string
  /**
   * Answers a request by what it asks, before the queue: for a test where requests interleave in
   * an order it does not control (a voice call's early replies to partial words). Undefined: the queue.
   */
  replyFor?: (request: RecordedRequest) => OpenAIReply | undefined
  /** Ms before a stream's first chunk (time to first token); 0 by default. Realistic: `REALISTIC.openaiFirstTokenMs`. */
  firstTokenMs?: number
  /** Ms between a stream's later chunks (output speed); 0 by default. Realistic: `REALISTIC.openaiTokenMs`. */
  tokenMs?: number
}

/** Cancellable sleeps, so a stalled stream ends as soon as the client goes away. */
export class Sleeper {
  private timers = new Set<{ t: ReturnType<typeof setTimeout>; done: () => void }>()
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        t: setTimeout(() => {
          this.timers.delete(entry)
          resolve()
        }, ms),
        done: resolve,
      }
      this.timers.add(entry)
    })
  }
  get pending(): number {
    return this.timers.size
  }
  wakeAll(): void {
    for (const e of this.timers) {
      clearTimeout(e.t)
      e.done()
    }
    this.timers.clear()
  }
}

/**
 * An SSE response body from pre-rendered frames, with optional stall, cut and re-chunking, and
 * pacing: `firstMs` before the first frame, `everyMs` before each later one.
 */
export function sseBody(frames: string[], sleeper: Sleeper, o: { stall?: Stall; splitBytes?: number; cutAt?: number; firstMs?: number; everyMs?: number } = {}): Response {
  const enc = new TextEncoder()
  let cancelled = false
  const send = o.cutAt === undefined ? frames : frames.slice(0, o.cutAt)
  async function* bytes(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < send.length; i++) {
      const pace = i === 0 ? o.firstMs : o.everyMs
      if (pace) await sleeper.sleep(pace)
      if (o.stall && i === o.stall.afterFrames) await sleeper.sleep(o.stall.ms)
      if (cancelled) return
      const b = enc.encode(send[i])
      if (!o.splitBytes) yield b
      else for (let k = 0; k < b.length; k += o.splitBytes) yield b.slice(k, k + o.splitBytes)
    }
  }
  const it = bytes()
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      const r = await it.next()
      if (r.done || cancelled) c.close()
      else c.enqueue(r.value)
    },
    cancel() {
      cancelled = true
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } })
}

export async function record(req: Request, url: URL): Promise<RecordedRequest> {
  const headers: Record<string, string> = {}
  req.headers.forEach((v, k) => {
    headers[k] = v
  })
  const text = req.method === 'GET' ? '' : await req.text()
  let body: any = text
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    // keep the raw text: a test may want to see a malformed body
  }
  return { method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** OpenAI masks a wrong key in its 401 message like this; the adapter must still redact it. */
const masked = (key: string) => `${key.slice(0, 3)}${'*'.repeat(Math.max(4, key.length - 7))}${key.slice(-4)}`

export function startOpenAIFake(opts: FakeOpenAIOptions = {}): FakeOpenAI {
  const queue: OpenAIReply[] = []
  const requests: RecordedRequest[] = []
  const sleeper = new Sleeper()
  let n = 0

  function oaError(status: number, message: string, type: string, code: string | null, headers?: Record<string, string>) {
    return json(status, { error: { message, type, param: null, code } }, headers)
  }

  async function chat(rec: RecordedRequest, azure: boolean): Promise<Response> {
    const fallback: OpenAIReply = opts.defaultReply
      ? { kind: 'stream', text: opts.defaultReply.match(/\s*\S+/g) ?? [] }
      : { kind: 'error', status: 500, message: 'The fake has no scripted reply for this request.', type: 'server_error' }
    const r = opts.replyFor?.(rec) ?? queue.shift() ?? fallback
    if (r.kind === 'hang') {
      await sleeper.sleep(r.ms)
      return oaError(504, 'hung', 'server_error', null)
    }
    if (r.kind === 'json') return json(200, r.body)
    if (r.kind === 'error') {
      if (azure) return json(r.status, { error: { code: r.code ?? String(r.status), message: r.message ?? 'error' } }, r.headers)
      return oaError(r.status, r.message ?? 'error', r.type ?? 'invalid_request_error', r.code ?? null, r.headers)
    }
    const includeUsage = rec.body?.stream_options?.include_usage === true
    const base = { id: `chatcmpl-fake${++n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: rec.body?.model ?? opts.deployment ?? 'fake', system_fingerprint: 'fp_fake' }
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) })}\n\n`
    const frames = [chunk({ role: 'assistant', content: '', refusal: null })]
    for (const t of r.text ?? []) frames.push(chunk({ content: t }))
    ;(r.toolCalls ?? []).forEach((c, index) => {
      frames.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }))
      for (const a of c.args) frames.push(chunk({ tool_calls: [{ index, function: { arguments: a } }] }))
    })
    if (r.errorChunk) {
      frames.push(`data: ${JSON.stringify({ error: { message: r.errorChunk.message, type: r.errorChunk.type ?? 'server_error', param: null, code: r.errorChunk.code ?? null } })}\n\n`)
    } else {
      frames.push(chunk({}, r.finishReason ?? (r.toolCalls?.length ? 'tool_calls' : 'stop')))
      if (includeUsage) {
        const u = r.usage ?? { prompt_tokens: 10, completion_tokens: 5 }
        frames.push(`data: ${JSON.stringify({ ...base, choices: [], usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens } })}\n\n`)
      }
    }
    const terminated = [...frames, 'data: [DONE]\n\n']
    const cutAt = r.cut === true ? (r.errorChunk ? terminated.length - 1 : frames.length - (includeUsage ? 1 : 0)) : r.cut
    return sseBody(terminated, sleeper, { stall: r.stall, splitBytes: r.splitBytes, cutAt, firstMs: opts.firstTokenMs, everyMs: opts.tokenMs })
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0, // stalls are the point of some tests; Bun must not cut them first
    async fetch(req) {
      const url = new URL(req.url)
      const rec = await record(req, url)
      requests.push(rec)
      const az = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname)
      if (az || url.pathname === '/openai/models') {
        if (opts.apiKey && rec.headers['api-key'] !== opts.apiKey) {
          return json(401, {
            error: {
              code: '401',
              message:
                'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
            },
          })
        }
        if (!url.searchParams.get('api-version')) return json(404, { error: { code: '404', message: 'Resource not found' } })
        if (!az) return json(200, { data: (opts.models ?? ['gpt-4o-mini']).map((id) => ({ id, object: 'model', status: 'succeeded' })), object: 'list' })
        if (opts.deployment && decodeURIComponent(az[1]) !== opts.deployment) {
          return json(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } })
        }
        return chat(rec, true)
      }
      if (opts.apiKey && rec.headers.authorization !== `Bearer ${opts.apiKey}`) {
        const sent = (rec.headers.authorization ?? '').replace(/^Bearer\s+/i, '')
        return oaError(401, `Incorrect API key provided: ${masked(sent)}. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', 'invalid_api_key')
      }
      if (req.method === 'GET' && url.pathname === '/v1/models') {
        return json(200, { object: 'list', data: (opts.models ?? ['gpt-4o-mini']).map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) })
      }
      if (req.method === 'POST' && url.pathname === '/v1/chat/completions') return chat(rec, false)
      return oaError(404, `Unknown request URL: ${req.method} ${url.pathname}.`, 'invalid_request_error', 'unknown_url')
    },
  })
  const origin = `http://127.0.0.1:${server.port}`
  return {
    origin,
    baseUrl: `${origin}/v1`,
    requests,
    reply: (...r) => void queue.push(...r),
    stalled: () => sleeper.pending,
    wake: () => sleeper.wakeAll(),
    async stop() {
      sleeper.wakeAll()
      await server.stop(true)
    },
  }
}
