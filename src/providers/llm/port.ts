/**
 * The LanguageModel port: one streaming call shape for every vendor (OpenAI and compatible
 * servers, Azure OpenAI, Anthropic) and for the offline `local` responder, so the conversation
 * engine and the voice pipeline never know which one they talk to.
 *
 * Stream contract every adapter keeps:
 * - `text` events arrive as soon as the vendor sends them (the voice pipeline speaks sentences
 *   while the rest is still being generated);
 * - `tool_call` events are emitted only once the vendor's turn is known to be complete (its
 *   terminator was seen), each with arguments already parsed into an object. A stream cut half way
 *   therefore never triggers a side-effecting tool;
 * - exactly one `done` event ends a successful stream, and it is the last event;
 * - every failure is thrown as an `LlmError` (errors.ts): a stream that ends without its
 *   terminator, or tool arguments that are not a JSON object, are `protocol` errors, never a
 *   silent success;
 * - breaking out of the `for await` loop (or aborting `signal`) cancels the HTTP request.
 */
import { LlmError } from './errors'

export type Role = 'system' | 'user' | 'assistant' | 'tool'

export interface ToolCall {
  id: string
  name: string
  arguments: Record<string, unknown>
}

export interface ChatMessage {
  role: Role
  content: string
  /** assistant only: the tool calls this turn made (sent back so the vendor sees its own turn). */
  toolCalls?: ToolCall[]
  /** tool only: which call this message answers. */
  toolCallId?: string
  /** tool only: the tool's name (Anthropic does not need it; the local model reads it). */
  name?: string
}

export interface ToolSpec {
  name: string
  description: string
  /** A JSON Schema object describing the arguments. */
  parameters: Record<string, unknown>
}

export interface StreamRequest {
  messages: ChatMessage[]
  tools?: ToolSpec[]
  temperature?: number
  maxTokens?: number
  /** Asks for the same sampling on the same request (OpenAI and compatible servers take it, best effort; Anthropic has none and ignores it). */
  seed?: number
  signal?: AbortSignal
  /**
   * Longest wait for the next piece of the answer (the response headers, then each chunk).
   * Overrides the adapter's defaults for this request; see transport.ts for those.
   */
  timeoutMs?: number
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'error'

export interface Usage {
  inputTokens: number
  outputTokens: number
}

export type LlmEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'done'; finishReason: FinishReason; usage?: Usage }

export interface LanguageModel {
  /** The model id as the vendor knows it (for Azure: the deployment name). */
  readonly id: string
  /** Provider id: `openai`, `openai-compatible`, `azure`, `anthropic`, `local`. */
  readonly provider: string
  stream(req: StreamRequest): AsyncIterable<LlmEvent>
}

export interface ModelInfo {
  id: string
  /** A display name when the vendor gives one (Anthropic does). */
  name?: string
}

export interface ListModelsOptions {
  signal?: AbortSignal
  timeoutMs?: number
}

/** BYOK verification: a cheap authenticated call that also says which models the key reaches. */
export interface ModelCatalog {
  listModels(opts?: ListModelsOptions): Promise<ModelInfo[]>
}

export interface Completion {
  text: string
  toolCalls: ToolCall[]
  finishReason: FinishReason
  usage?: Usage
}

/** Collects a whole stream: for callers that do not speak while generating (summaries, tests). */
export async function complete(model: LanguageModel, req: StreamRequest): Promise<Completion> {
  let text = ''
  const toolCalls: ToolCall[] = []
  for await (const ev of model.stream(req)) {
    if (ev.type === 'text') text += ev.text
    else if (ev.type === 'tool_call') toolCalls.push({ id: ev.id, name: ev.name, arguments: ev.arguments })
    else return { text, toolCalls, finishReason: ev.finishReason, usage: ev.usage }
  }
  // Adapters throw before this; a third-party LanguageModel that forgets `done` is still caught.
  throw new LlmError({
    kind: 'protocol',
    provider: model.provider,
    message: `The ${model.provider} stream ended without finishing its answer.`,
  })
}
