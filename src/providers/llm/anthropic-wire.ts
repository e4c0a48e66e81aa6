/**
 * Our port's chat history → the Anthropic Messages request body (everything but `model` and
 * `stream`). Anthropic's rules that shape this:
 * - system text is a top-level `system` string, not a message;
 * - a tool result is a `tool_result` block inside a `user` turn, and the results answering one
 *   assistant turn belong in the single user turn that follows it, before any text;
 * - turns alternate, so consecutive same-role messages are merged into one turn;
 * - empty text blocks are refused ("text content blocks must be non-empty");
 * - `max_tokens` is required and `temperature` only goes to 1.
 */
import { LlmError } from './errors'
import type { ChatMessage, StreamRequest } from './port'

/**
 * Sent when the caller gives no `maxTokens`. 1024: above the agent's `maxReplyTokens` ceiling
 * of 800 (docs/spec.md Limits), so the default never cuts a reply the agent settings would allow.
 */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024

/**
 * Stands in for the customer when the history does not start with them (the agent greets first,
 * or only a system prompt exists yet): Bedrock and older API versions refuse an assistant-first
 * or empty history.
 */
export const CONVERSATION_START = '(The conversation has just started; the customer has not written yet.)'

type Block = Record<string, unknown>
interface Turn {
  role: 'user' | 'assistant'
  content: Block[]
}

export function toAnthropicRequest(req: StreamRequest): Record<string, unknown> {
  const system = req.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content.trim())
    .filter(Boolean)
    .join('\n\n')
  const turns: Turn[] = []
  for (const m of req.messages) {
    if (m.role === 'system') continue
    const turn = toTurn(m)
    if (!turn.content.length) continue
    const last = turns[turns.length - 1]
    if (last && last.role === turn.role) last.content.push(...turn.content)
    else turns.push(turn)
  }
  for (const t of turns) if (t.role === 'user') t.content.sort(resultsFirst)
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ type: 'text', text: CONVERSATION_START }] })

  const body: Record<string, unknown> = { max_tokens: req.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS }
  if (system) body.system = system
  body.messages = turns
  if (req.tools?.length) body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }))
  // Our agents allow 0–2 (OpenAI's range); Anthropic refuses more than 1, so clamp rather than fail.
  if (req.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, req.temperature))
  return body
}

function toTurn(m: ChatMessage): Turn {
  if (m.role === 'tool') {
    if (!m.toolCallId) {
      throw new LlmError({ kind: 'bad_request', provider: 'anthropic', message: 'A tool message must say which call it answers (toolCallId).' })
    }
    return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content }] }
  }
  const content: Block[] = m.content.trim() ? [{ type: 'text', text: m.content }] : []
  if (m.role === 'assistant') {
    for (const c of m.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments })
  }
  return { role: m.role === 'assistant' ? 'assistant' : 'user', content }
}

/** Stable sort key: tool results before the customer's text in the same user turn. */
function resultsFirst(a: Block, b: Block): number {
  return (a.type === 'tool_result' ? 0 : 1) - (b.type === 'tool_result' ? 0 : 1)
}
