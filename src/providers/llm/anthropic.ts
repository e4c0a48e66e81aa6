/**
 * Anthropic Messages API, streamed (POST {base}/v1/messages, `stream: true`).
 *
 * Wire protocol: named SSE events whose data repeats the name in `type`:
 * `message_start` (message.usage.input_tokens) → per content block `content_block_start`
 * (`text` or `tool_use` with id and name) → `content_block_delta` (`text_delta.text` or
 * `input_json_delta.partial_json`, the tool input as JSON text in pieces) → `content_block_stop`
 * → `message_delta` (delta.stop_reason, cumulative usage.output_tokens) → `message_stop`.
 * `ping` may appear anywhere; an `error` event ends the stream with a vendor error. Unknown event
 * and block types are skipped, as Anthropic's versioning policy asks of clients.
 *
 * Request shape differs from OpenAI: the system prompt is a top-level `system`, `max_tokens` is
 * required, tools carry `input_schema`, and tool results go back inside a `user` turn as
 * `tool_result` blocks (message conversion in anthropic-wire.ts).
 */

import { toAnthropicRequest } from './anthropic-wire'
import { LlmError, protocolError, streamError } from './errors'
import type { FinishReason, LanguageModel, ListModelsOptions, LlmEvent, ModelCatalog, ModelInfo, StreamRequest, Usage } from './port'
import { checkBaseUrl, type Endpoint, type FetchLike, getJson, HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, parseArguments, parseData, postForEvents } from './transport'

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com'
/** The one stable Messages API version; newer behaviour comes through beta headers we do not use. */
export const ANTHROPIC_VERSION = '2023-06-01'

export interface AnthropicOptions {
  model: string
  apiKey: string
  /** Without the `/v1` segment (the adapter adds `/v1/messages`, `/v1/models`). */
  baseUrl?: string
  fetch?: FetchLike
  headersTimeoutMs?: number
  idleTimeoutMs?: number
}

type Wire = Record<string, unknown>
type Block = { kind: 'text' } | { kind: 'tool'; id: string; name: string; json: string; input: unknown } | { kind: 'other' }

/** Model-list pages to follow at most: 10 × 1000 models is far beyond any real catalogue. */
const MAX_MODEL_PAGES = 10

export class AnthropicChatModel implements LanguageModel, ModelCatalog {
  readonly id: string
  readonly provider = 'anthropic'
  private readonly ep: Endpoint
  private readonly base: string
  private readonly apiKey: string

  constructor(opts: AnthropicOptions) {
    if (!opts.apiKey) throw new LlmError({ kind: 'auth', provider: 'anthropic', message: 'Anthropic needs an API key.' })
    this.id = opts.model
    this.apiKey = opts.apiKey
    this.base = checkBaseUrl('anthropic', opts.baseUrl ?? ANTHROPIC_BASE_URL)
    this.ep = {
      provider: 'anthropic',
      label: 'Anthropic',
      fetch: opts.fetch ?? ((u, i) => fetch(u, i)),
      secrets: [opts.apiKey],
      headersTimeoutMs: opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      idleTimeoutMs: opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
    }
  }

  private headers(): Record<string, string> {
    return { 'x-api-key': this.apiKey, 'anthropic-version': ANTHROPIC_VERSION }
  }

  body(req: StreamRequest): Wire {
    return { model: this.id, ...toAnthropicRequest(req), stream: true }
  }

  async *stream(req: StreamRequest): AsyncGenerator<LlmEvent> {
    const ep = this.ep
    const blocks = new Map<number, Block>()
    let stop: string | undefined
    let usage: Usage | undefined
    let terminated = false
    for await (const ev of postForEvents(ep, `${this.base}/v1/messages`, this.headers(), this.body(req), req)) {
      const msg = parseData(ep, ev.data)
      const type = typeof msg.type === 'string' ? msg.type : ev.event
      if (type === 'message_stop') {
        terminated = true
        break
      }
      switch (type) {
        case 'message_start': {
          const u = ((msg.message ?? {}) as Wire).usage as Wire | undefined
          if (u) usage = { inputTokens: inputTokens(u), outputTokens: num(u.output_tokens) }
          break
        }
        case 'content_block_start': {
          const cb = (msg.content_block ?? {}) as Wire
          const index = num(msg.index)
          if (cb.type === 'text') {
            blocks.set(index, { kind: 'text' })
            if (typeof cb.text === 'string' && cb.text) yield { type: 'text', text: cb.text }
          } else if (cb.type === 'tool_use') {
            if (typeof cb.id !== 'string' || typeof cb.name !== 'string') throw protocolError(ep.provider, 'Anthropic started a tool call without an id or name.')
            blocks.set(index, { kind: 'tool', id: cb.id, name: cb.name, json: '', input: cb.input })
          } else blocks.set(index, { kind: 'other' }) // thinking, server tools: not part of the reply
          break
        }
        case 'content_block_delta': {
          const d = (msg.delta ?? {}) as Wire
          const block = blocks.get(num(msg.index))
          if (!block) throw protocolError(ep.provider, 'Anthropic sent a delta for a content block it never started.')
          if (d.type === 'text_delta' && block.kind === 'text' && typeof d.text === 'string' && d.text) yield { type: 'text', text: d.text }
          if (d.type === 'input_json_delta' && block.kind === 'tool' && typeof d.partial_json === 'string') block.json += d.partial_json
          break
        }
        case 'message_delta': {
          const d = (msg.delta ?? {}) as Wire
          if (typeof d.stop_reason === 'string') stop = d.stop_reason
          const u = msg.usage as Wire | undefined
          if (u) {
            usage = {
              // Newer API versions repeat input tokens here; older ones only give them at start.
              inputTokens: u.input_tokens !== undefined ? inputTokens(u) : (usage?.inputTokens ?? 0),
              outputTokens: num(u.output_tokens ?? usage?.outputTokens),
            }
          }
          break
        }
        case 'error': {
          const e = (msg.error ?? {}) as Wire
          throw streamError(ep.provider, ep.label, str(e.type), str(e.message), ep.secrets)
        }
        default:
          break // ping, content_block_stop, and event types added after this was written
      }
    }
    if (!terminated) throw protocolError(ep.provider, 'Anthropic stopped before finishing its answer (the stream ended without message_stop).')
    const cut = stop === 'max_tokens' || stop === 'model_context_window_exceeded'
    let emitted = 0
    for (const [, b] of [...blocks.entries()].sort((x, y) => x[0] - y[0])) {
      if (b.kind !== 'tool') continue
      let args: Record<string, unknown>
      try {
        args = b.json === '' && isObject(b.input) ? b.input : parseArguments(ep, b.name, b.json)
      } catch (e) {
        if (cut) continue // the token limit cut this call short: report `length`, not a broken vendor
        throw e
      }
      emitted++
      yield { type: 'tool_call', id: b.id, name: b.name, arguments: args }
    }
    yield { type: 'done', finishReason: mapStop(stop, emitted > 0), ...(usage ? { usage } : {}) }
  }

  async listModels(opts: ListModelsOptions = {}): Promise<ModelInfo[]> {
    const out: ModelInfo[] = []
    let after: string | undefined
    for (let page = 0; page < MAX_MODEL_PAGES; page++) {
      const q = `limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`
      const json = (await getJson(this.ep, `${this.base}/v1/models?${q}`, this.headers(), opts)) as Wire
      if (!Array.isArray(json?.data)) throw protocolError(this.provider, 'Anthropic answered the model list without a "data" array.')
      for (const m of json.data as Wire[]) {
        if (typeof m?.id === 'string') out.push({ id: m.id, ...(typeof m.display_name === 'string' ? { name: m.display_name } : {}) })
      }
      if (json.has_more !== true || typeof json.last_id !== 'string') break
      after = json.last_id
    }
    return out
  }
}

function mapStop(stop: string | undefined, hadCalls: boolean): FinishReason {
  if (stop === 'max_tokens' || stop === 'model_context_window_exceeded') return 'length'
  if (hadCalls) return 'tool_calls'
  if (stop === 'refusal') return 'error' // the model declined; the text is not an answer
  return 'stop' // end_turn, stop_sequence, pause_turn
}

/** Billed input = uncached + cache writes + cache reads. */
function inputTokens(u: Wire): number {
  return num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens)
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
