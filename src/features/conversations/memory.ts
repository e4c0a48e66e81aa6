/**
 * The agent's memory of a conversation: its recent messages turned back into chat turns,
 * including the tools earlier replies used (so the model knows a lead was already taken or the
 * team already called). Team notes are never part of it.
 *
 * Bounded twice, newest kept, oldest dropped first, whole messages only (an agent reply never
 * loses its tool results, which every vendor requires next to the call):
 * - MEMORY_MESSAGES = 20: the last ten exchanges; beyond that a chat has usually moved on, and
 *   facts that matter come back through search_knowledge, not memory.
 * - MEMORY_CHARS = 12,000: about 3,000 tokens at ~4 characters a token, so memory never crowds
 *   the instructions (8,000 characters) and knowledge passages out of even small context
 *   windows, and a phone call's first token stays quick.
 * Tool outputs inside memory are cut to MEMORY_TOOL_OUTPUT_CHARS: the reply that followed them
 * already says what mattered.
 */
import type { ChatMessage } from '../../providers/llm'
import type { MessageDoc } from './model'

export const MEMORY_MESSAGES = 20
export const MEMORY_CHARS = 12_000
export const MEMORY_TOOL_OUTPUT_CHARS = 1_000

/** The text of a message: its text parts, and media as a short mention the model can follow. */
export function messageText(doc: MessageDoc): string {
  return doc.parts
    .map((p) => (p.type === 'text' ? p.text : p.type === 'image' ? `[image${p.alt ? `: ${p.alt}` : ''}]` : `[${p.type}${p.name ? `: ${p.name}` : ''}]`))
    .join('\n')
    .trim()
}

const outputText = (output: unknown): string => {
  const s = typeof output === 'string' ? output : JSON.stringify(output ?? null)
  return s.length > MEMORY_TOOL_OUTPUT_CHARS ? `${s.slice(0, MEMORY_TOOL_OUTPUT_CHARS)}…` : s
}

function turnsOf(doc: MessageDoc): ChatMessage[] {
  const content = messageText(doc)
  if (doc.author === 'customer') return [{ role: 'user', content }]
  // A teammate's message is part of what the customer saw; the model continues from it.
  if (doc.author === 'teammate') return [{ role: 'assistant', content: content ? `(A person from the team wrote:) ${content}` : '' }]
  const turns: ChatMessage[] = []
  const tools = doc.tools ?? []
  if (tools.length) {
    turns.push({ role: 'assistant', content: '', toolCalls: tools.map((t) => ({ id: t.id, name: t.name, arguments: t.input })) })
    for (const t of tools) turns.push({ role: 'tool', content: outputText(t.output), toolCallId: t.id, name: t.name })
  }
  turns.push({ role: 'assistant', content })
  return turns
}

const sizeOf = (turns: ChatMessage[]): number => turns.reduce((n, t) => n + t.content.length + (t.toolCalls ? JSON.stringify(t.toolCalls).length : 0), 0)

/** `history` oldest first (as ConversationService.history returns it) → chat turns within the bounds. */
export function memoryTurns(history: MessageDoc[], maxChars = MEMORY_CHARS): ChatMessage[] {
  const kept: ChatMessage[][] = []
  let used = 0
  for (let i = history.length - 1; i >= 0 && kept.length < MEMORY_MESSAGES; i--) {
    const turns = turnsOf(history[i]).filter((t) => t.content || t.toolCalls?.length)
    const size = sizeOf(turns)
    if (used + size > maxChars) break
    used += size
    kept.push(turns)
  }
  return kept.reverse().flat()
}
