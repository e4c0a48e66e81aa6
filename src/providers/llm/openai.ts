/**
 * OpenAI Chat Completions, streamed — also the dialect of Groq, Together, vLLM, Ollama (`/v1`),
 * llama.cpp's server and Azure OpenAI, so one adapter serves them all.
 *
 * Wire protocol (POST {base}/chat/completions, `stream: true`): `data: <chunk>` events with no
 * `event:` name; each chunk is `{ choices: [{ index, delta: { content?, tool_calls? },
 * finish_reason }], usage }`. Tool calls stream as fragments keyed by `delta.tool_calls[].index`:
 * the first fragment carries `id` and `function.name`, later ones append to `function.arguments`.
 * With `stream_options.include_usage` a last chunk with `choices: []` carries `usage`. The stream
 * ends with `data: [DONE]`; without it the answer is incomplete.
 *
 * Azure mode: `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…` with an
 * `api-key` header; the deployment, not the body's `model`, picks the model.
 */
import { LlmError, protocolError, streamError } from './errors'
import type { ChatMessage, FinishReason, LanguageModel, ListModelsOptions, LlmEvent, ModelCatalog, ModelInfo, StreamRequest, ToolSpec, Usage } from './port'
import { checkBaseUrl, type Endpoint, type FetchLike, getJson, HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, parseArguments, parseData, postForEvents } from './transport'

export const OPENAI_BASE_URL = 'https://api.openai.com/v1'
/** Latest GA data-plane inference version at the time of writing; supports stream_options. */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21'

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, … : `o` then a digit) think in hidden tokens that
 * count against `max_completion_tokens`, and refuse any `temperature` but the default 1. A reply
 * budget of a few hundred tokens can be spent on thinking alone, leaving an empty answer with
 * finish `length`. OpenAI's reasoning guide recommends "reserving at least 25,000 tokens for
 * reasoning and outputs" with these models; that is the budget they get (or the request's own,
 * if larger). The visible reply stays short through the prompt's rules instead.
 */
export const REASONING_COMPLETION_TOKENS = 25_000
export const isReasoningModel = (id: string): boolean => /^o\d/i.test(id)

export interface OpenAIOptions {
  provider?: 'openai' | 'openai-compatible' | 'azure'
  /** Model id; in Azure mode the deployment name is used when this is empty. */
  model: string
  apiKey?: string
  /** OpenAI-style base including its version segment (`…/v1`); in Azure mode the resource endpoint. */
  baseUrl?: string
  azure?: { deployment: string; apiVersion?: string }
  /**
   * OpenAI's own API deprecated `max_tokens` and its reasoning models refuse it, while many
   * compatible servers only know `max_tokens`. Default: `max_completion_tokens` for `openai`,
   * `max_tokens` otherwise.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens'
  fetch?: FetchLike
  headersTimeoutMs?: number
  idleTimeoutMs?: number
}

type Wire = Record<string, unknown>

export class OpenAIChatModel implements LanguageModel, ModelCatalog {
  readonly id: string
  readonly provider: string
  private readonly ep: Endpoint
  private readonly base: string
  private readonly opts: OpenAIOptions

  constructor(opts: OpenAIOptions) {
    this.provider = opts.provider ?? 'openai'
    this.opts = opts
    this.base = checkBaseUrl(this.provider, opts.baseUrl ?? OPENAI_BASE_URL)
    if (this.provider === 'azure' && !opts.azure?.deployment) {
      throw new LlmError({ kind: 'bad_request', provider: 'azure', message: 'Azure OpenAI needs a deployment name.' })
    }
    this.id = opts.model || opts.azure?.deployment || ''
    const label = this.provider === 'openai' ? 'OpenAI' : this.provider === 'azure' ? 'Azure OpenAI' : `the model server at ${new URL(this.base).host}`
    this.ep = {
      provider: this.provider,
      label,
      fetch: opts.fetch ?? ((u, i) => fetch(u, i)),
      secrets: [opts.apiKey],
      headersTimeoutMs: opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      idleTimeoutMs: opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
    }
  }

  private headers(): Record<string, string> {
    const key = this.opts.apiKey
    if (!key) return {} // Ollama and many local servers need none
    return this.provider === 'azure' ? { 'api-key': key } : { authorization: `Bearer ${key}` }
  }

  private url(path: 'chat/completions' | 'models'): string {
    const az = this.opts.azure
    if (this.provider !== 'azure' || !az) return `${this.base}/${path}`
    const v = encodeURIComponent(az.apiVersion ?? AZURE_DEFAULT_API_VERSION)
    return path === 'models' ? `${this.base}/openai/models?api-version=${v}` : `${this.base}/openai/deployments/${encodeURIComponent(az.deployment)}/chat/completions?api-version=${v}`
  }

  /** The exact JSON body sent for `req` (public so callers can log or show what would be sent). */
  body(req: StreamRequest): Wire {
    const b: Wire = {}
    if (this.provider !== 'azure') b.model = this.id
    b.messages = req.messages.map((m) => toWireMessage(this.provider, m))
    b.stream = true
    b.stream_options = { include_usage: true }
    if (req.tools?.length) b.tools = req.tools.map(toWireTool)
    const reasoning = isReasoningModel(this.id)
    if (req.temperature !== undefined && !reasoning) b.temperature = req.temperature
    if (req.seed !== undefined) b.seed = req.seed
    if (req.maxTokens !== undefined) {
      const field = this.opts.maxTokensField ?? (this.provider === 'openai' || reasoning ? 'max_completion_tokens' : 'max_tokens')
      b[field] = reasoning ? Math.max(req.maxTokens, REASONING_COMPLETION_TOKENS) : req.maxTokens
    }
    return b
  }

  async *stream(req: StreamRequest): AsyncGenerator<LlmEvent> {
    const ep = this.ep
    const calls = new Map<number, { id: string; name: string; args: string }>()
    let finish: string | undefined
    let usage: Usage | undefined
    let terminated = false
    const events = postForEvents(ep, this.url('chat/completions'), this.headers(), this.body(req), req)
    for await (const ev of events) {
      if (ev.data.trim() === '[DONE]') {
        terminated = true
        break
      }
      const chunk = parseData(ep, ev.data)
      if (chunk.error !== undefined && chunk.error !== null) throw chunkError(ep, chunk.error)
      const u = chunk.usage as Wire | null | undefined
      if (u && typeof u.prompt_tokens === 'number') {
        usage = { inputTokens: u.prompt_tokens, outputTokens: Number(u.completion_tokens ?? 0) }
      }
      for (const c of (Array.isArray(chunk.choices) ? chunk.choices : []) as Wire[]) {
        if ((c.index ?? 0) !== 0) continue // we never ask for n > 1
        const d = (c.delta ?? {}) as Wire
        if (typeof d.content === 'string' && d.content) yield { type: 'text', text: d.content }
        if (Array.isArray(d.tool_calls)) for (const f of d.tool_calls as Wire[]) addFragment(calls, f)
        if (typeof c.finish_reason === 'string') finish = c.finish_reason
      }
    }
    if (!terminated) throw protocolError(ep.provider, `${ep.label} stopped before finishing its answer (the stream ended without [DONE]).`)
    const cut = finish === 'length'
    let emitted = 0
    for (const [index, c] of [...calls.entries()].sort((a, b) => a[0] - b[0])) {
      if (!c.name) throw protocolError(ep.provider, `${ep.label} sent a tool call without a name.`)
      let args: Record<string, unknown>
      try {
        args = parseArguments(ep, c.name, c.args)
      } catch (e) {
        if (cut) continue // the token limit cut this call short: report `length`, not a broken vendor
        throw e
      }
      emitted++
      yield { type: 'tool_call', id: c.id || `call_${index}`, name: c.name, arguments: args }
    }
    yield { type: 'done', finishReason: mapFinish(finish, emitted > 0), ...(usage ? { usage } : {}) }
  }

  async listModels(opts: ListModelsOptions = {}): Promise<ModelInfo[]> {
    const json = (await getJson(this.ep, this.url('models'), this.headers(), opts)) as Wire
    // Azure's data plane cannot list deployments; the call above proves the key and endpoint,
    // and the one deployment configured is what this key reaches for chat.
    if (this.provider === 'azure') return [{ id: this.opts.azure!.deployment }]
    if (!Array.isArray(json?.data)) throw protocolError(this.provider, `${this.ep.label} answered the model list without a "data" array.`)
    return (json.data as Wire[]).filter((m) => typeof m?.id === 'string').map((m) => ({ id: m.id as string }))
  }
}

function addFragment(calls: Map<number, { id: string; name: string; args: string }>, f: Wire): void {
  const index = typeof f.index === 'number' ? f.index : calls.size
  let cur = calls.get(index)
  if (!cur) {
    cur = { id: '', name: '', args: '' }
    calls.set(index, cur)
  }
  if (typeof f.id === 'string' && f.id) cur.id = f.id
  const fn = (f.function ?? {}) as Wire
  // OpenAI sends the name whole in the first fragment; some servers repeat it in later ones.
  if (typeof fn.name === 'string' && fn.name && fn.name !== cur.name) cur.name += fn.name
  if (typeof fn.arguments === 'string') cur.args += fn.arguments
}

function mapFinish(finish: string | undefined, hadCalls: boolean): FinishReason {
  if (finish === 'length') return 'length'
  // Some compatible servers (older Ollama, llama.cpp) say "stop" after a tool call.
  if (hadCalls) return 'tool_calls'
  // content_filter: the vendor withheld or cut the reply; it is not a complete answer.
  if (finish === 'content_filter') return 'error'
  return 'stop'
}

/** OpenAI-compatible servers (vLLM, llama.cpp, proxies) may put `{ error }` in a chunk mid-stream. */
function chunkError(ep: Endpoint, err: unknown): LlmError {
  if (typeof err === 'string') return streamError(ep.provider, ep.label, undefined, err, ep.secrets)
  const e = (err ?? {}) as Wire
  const type = typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : undefined
  return streamError(ep.provider, ep.label, type, typeof e.message === 'string' ? e.message : undefined, ep.secrets)
}

function toWireTool(t: ToolSpec): Wire {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }
}

function toWireMessage(provider: string, m: ChatMessage): Wire {
  if (m.role === 'tool') {
    if (!m.toolCallId) throw new LlmError({ kind: 'bad_request', provider, message: 'A tool message must say which call it answers (toolCallId).' })
    return { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
  }
  if (m.role === 'assistant' && m.toolCalls?.length) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
    }
  }
  return { role: m.role, content: m.content }
}
