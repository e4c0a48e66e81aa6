/**
 * The `local` language model: no network, no key, deterministic. It plays the same tool protocol
 * as a real model (streams text, emits tool calls, reads tool results) so the conversation engine
 * runs it exactly as it runs OpenAI or Anthropic — the whole loop works offline and in tests.
 *
 * Policy, in order (one step per call; after a tool result it always answers in text, so it can
 * never loop on tools):
 * 1. No user message yet → the greeting from the system prompt: a line `Greeting: …`
 *    (falls back to DEFAULT_GREETING).
 * 2. Last message is a tool result (tool found by `name`, or by `toolCallId` in the assistant turn):
 *    - `search_knowledge`, content JSON `{ passages: [{ text, score, documentId, title }] }`,
 *      ranked together with the business's own lines in the system prompt (local-facts.ts
 *      `businessFacts`: the "Instructions from the business" and "Steps" sections and the
 *      `Business:` line; the starter persona and the rules are not facts and are not read):
 *      the best passage (its `score`, 0–1) against the best line (its share of the question's
 *      words, more than FACT_MATCH_SHARE); a passage wins ties, since it can be cited. Answer: the
 *      one or two sentences sharing most words with the question, then `(Source: <title>)` for a
 *      passage; with neither (or unreadable content) it says plainly it has no answer to that
 *      and offers to connect a person;
 *    - `escalate`: says a person from the team will join; `capture_lead`: thanks, details noted;
 *    - `transfer_call`: says it is connecting the caller to the destination (or its error);
 *    - any other tool: its plain-text result when short, else a neutral "done".
 * 3. Last message is from the user — the first rule that applies:
 *    a. asks for a person/human/agent/manager (local-text.ts `asksForPerson`), or says yes to the
 *       no-answer line's offer of a person: `transfer_call` offered (a call, and the agent has
 *       transfers) → call it with the destination whose name or "when to use" shares most words
 *       with the request (the first on a tie); else `escalate` offered → call it with
 *       `{ reason: <the user's text> }`;
 *    b. contains an email address or phone number and `capture_lead` is offered → call it with
 *       `{ name?, email?, phone? }` (name from "my name is …", "I'm …");
 *    c. `search_knowledge` is offered → call it with `{ query: <the user's text> }`;
 *    d. no tool fits: a greeting ("hi") gets the greeting, anything else the business line that
 *       answers it (as in 2), else the no-answer line.
 *    A person request outranks contact details, which outrank search: asking for a human is the
 *    clearest intent, and a message carrying an email is rarely a question for the knowledge base.
 * 4. Last message is the assistant's own → asks whether there is anything else.
 * `maxTokens` is respected at ≈4 characters a token (finish `length` when cut); usage is the same
 * estimate. Tool-call ids are `call_local_<message count>` so runs repeat exactly.
 */
import { LlmError } from './errors'
import { answerFromFacts, businessFacts } from './local-facts'
import { asksForPerson, bestSentences, estimateTokens, findEmail, findName, findPhone, fitTokens, greetingFrom, isSmallTalkGreeting, terms } from './local-text'
import type { ChatMessage, LanguageModel, LlmEvent, ModelCatalog, ModelInfo, StreamRequest, ToolSpec } from './port'

export const NO_ANSWER = "I'm sorry, I don't have an answer to that. Would you like me to connect you with a person from our team?"
export const ESCALATED = "I've asked a person from our team to join this conversation. They'll be with you shortly."
export const LEAD_NOTED = "Thank you, I've noted your details. Someone from our team will be in touch."
export const ANYTHING_ELSE = 'Is there anything else I can help you with?'
export const TOOL_DONE = "Done, that's taken care of."
export const transferring = (to: string) => `Of course. I'm connecting you with ${to} now, please hold.`
/** Plain-text tool results longer than this are data for a model to summarise, not a reply. */
const MAX_ECHOED_RESULT_CHARS = 300

type Decision = { kind: 'text'; text: string } | { kind: 'tool'; name: string; arguments: Record<string, unknown> }

export class LocalLanguageModel implements LanguageModel, ModelCatalog {
  readonly id = 'local'
  readonly provider = 'local'

  async *stream(req: StreamRequest): AsyncGenerator<LlmEvent> {
    this.checkAbort(req.signal)
    const inputChars = req.messages.reduce((n, m) => n + m.content.length, 0) + JSON.stringify(req.tools ?? []).length
    const inputTokens = estimateTokens(inputChars)
    const d = decide(req.messages, req.tools ?? [])
    if (d.kind === 'tool') {
      const id = `call_local_${req.messages.length}`
      yield { type: 'tool_call', id, name: d.name, arguments: d.arguments }
      const outputTokens = estimateTokens(JSON.stringify(d.arguments).length + d.name.length)
      yield { type: 'done', finishReason: 'tool_calls', usage: { inputTokens, outputTokens } }
      return
    }
    const { text, cut } = fitTokens(d.text, req.maxTokens)
    // Sentence-sized pieces, like a streaming vendor, so sentence chunking downstream is exercised.
    for (const piece of text.match(/[^.!?]+(?:[.!?]+|$)\s*/g) ?? [text]) {
      this.checkAbort(req.signal)
      yield { type: 'text', text: piece }
    }
    this.checkAbort(req.signal)
    yield { type: 'done', finishReason: cut ? 'length' : 'stop', usage: { inputTokens, outputTokens: estimateTokens(text.length) } }
  }

  async listModels(): Promise<ModelInfo[]> {
    return [{ id: 'local', name: 'Local responder (no network)' }]
  }

  private checkAbort(signal?: AbortSignal): void {
    if (signal?.aborted) throw new LlmError({ kind: 'aborted', provider: 'local', message: 'The request to the local model was cancelled.' })
  }
}

export function decide(messages: ChatMessage[], tools: ToolSpec[]): Decision {
  const offered = (name: string) => tools.some((t) => t.name === name)
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
  const turns = messages.filter((m) => m.role !== 'system')
  const last = turns[turns.length - 1]
  if (!turns.some((m) => m.role === 'user') || !last) return { kind: 'text', text: greetingFrom(system) }

  if (last.role === 'tool') return answerToolResult(last, turns, system)
  if (last.role === 'assistant') return { kind: 'text', text: ANYTHING_ELSE }

  const text = last.content.trim()
  const previous = turns.at(-2)
  const wantsPerson = asksForPerson(text) || (previous?.role === 'assistant' && previous.content.trim() === NO_ANSWER && SAYS_YES.test(text))
  const transfer = tools.find((t) => t.name === 'transfer_call')
  if (transfer && wantsPerson) return { kind: 'tool', name: 'transfer_call', arguments: { destination: pickDestination(transfer, text) } }
  const menuChoice = offered('send_digits') ? chooseInMenu(text, [system, ...turns.filter((m) => m.role === 'assistant').map((m) => m.content)].join(' ')) : null
  if (menuChoice) return { kind: 'tool', name: 'send_digits', arguments: { digits: menuChoice } }
  if (offered('escalate') && asksForPerson(text)) return { kind: 'tool', name: 'escalate', arguments: { reason: text } }
  const email = findEmail(text)
  const phone = findPhone(text)
  if (offered('capture_lead') && (email || phone)) {
    const name = findName(text)
    return { kind: 'tool', name: 'capture_lead', arguments: { ...(name ? { name } : {}), ...(email ? { email } : {}), ...(phone ? { phone } : {}) } }
  }
  if (offered('search_knowledge') && text) return { kind: 'tool', name: 'search_knowledge', arguments: { query: text } }
  if (isSmallTalkGreeting(text)) return { kind: 'text', text: greetingFrom(system) }
  return { kind: 'text', text: answerFromFacts(businessFacts(system), text)?.text ?? NO_ANSWER }
}

function answerToolResult(result: ChatMessage, turns: ChatMessage[], system: string): Decision {
  const call = turns.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === result.toolCallId)
  const name = result.name ?? call?.name
  if (name === 'search_knowledge') {
    const lastUser = [...turns].reverse().find((m) => m.role === 'user')?.content ?? ''
    const query = typeof call?.arguments.query === 'string' ? call.arguments.query : lastUser
    return { kind: 'text', text: answerQuestion(result.content, query, system) }
  }
  if (name === 'escalate') return { kind: 'text', text: ESCALATED }
  // Keys pressed into a phone menu: nothing to say over it.
  if (name === 'send_digits') return { kind: 'text', text: '' }
  if (name === 'transfer_call') {
    let out: { transferring?: boolean; to?: string; error?: string } = {}
    try {
      out = JSON.parse(result.content)
    } catch {
      // A plain-text result (test chat) is said as it is.
      return { kind: 'text', text: result.content.trim() || TOOL_DONE }
    }
    return { kind: 'text', text: out.transferring && out.to ? transferring(out.to) : `I'm sorry, I can't put you through right now${out.error ? `: ${out.error}` : ''}.` }
  }
  if (name === 'capture_lead') return { kind: 'text', text: LEAD_NOTED }
  const plain = result.content.trim()
  const looksLikeData = /^[[{]/.test(plain)
  return { kind: 'text', text: plain && !looksLikeData && plain.length <= MAX_ECHOED_RESULT_CHARS ? plain : TOOL_DONE }
}

/** A yes to "Would you like me to connect you with a person from our team?". */
const SAYS_YES = /^\s*(?:yes|yeah|yep|sure|please|ok(?:ay)?|yes please|please do)\b/i

/** The destination whose name or "when to use" (the tool's description) shares most words with the request; the first on a tie. */
function pickDestination(spec: ToolSpec, text: string): string {
  const names = ((spec.parameters as { properties?: { destination?: { enum?: string[] } } }).properties?.destination?.enum ?? []).filter((n) => typeof n === 'string')
  // Words of four letters or more, a plural's `s` dropped: "refund" finds "refunds", "the" finds nothing.
  const wordsOf = (t: string) => (t.toLowerCase().match(/[a-z0-9]{4,}/g) ?? []).map((w) => w.replace(/s$/, ''))
  const words = new Set(wordsOf(text))
  const described = spec.description ?? ''
  let best = names[0] ?? ''
  let bestScore = 0
  for (const name of names) {
    const when = new RegExp(`"${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}": ([^;]*)`).exec(described)?.[1] ?? ''
    const score = new Set(wordsOf(`${name} ${when}`).filter((w) => words.has(w))).size
    if (score > bestScore) [best, bestScore] = [name, score]
  }
  return best
}

interface Passage {
  text: string
  score: number
  title?: string
}

/** The search's best passage or the business's best line, whichever matches the question better. */
function answerQuestion(content: string, query: string, system: string): string {
  const passages = readPassages(content)
  const best = passages.length ? passages.reduce((a, b) => ((Number(b.score) || 0) > (Number(a.score) || 0) ? b : a)) : null
  const fact = answerFromFacts(businessFacts(system), query)
  if (fact && (!best || fact.share > (Number(best.score) || 0))) return fact.text
  if (!best) return NO_ANSWER
  const answer = bestSentences(best.text, query)
  return best.title ? `${answer} (Source: ${best.title})` : answer
}

function readPassages(content: string): Passage[] {
  let passages: Passage[] = []
  try {
    const parsed = JSON.parse(content) as { passages?: unknown }
    if (Array.isArray(parsed?.passages)) {
      passages = parsed.passages.filter((p): p is Passage => !!p && typeof p === 'object' && typeof (p as Passage).text === 'string' && (p as Passage).text.trim() !== '')
    }
  } catch {
    // An unreadable search result is the same as finding nothing: say so rather than guess.
  }
  return passages
}

/**
 * A phone menu's option that fits what the agent is calling about: "press 1 for appointments, 2
 * for billing" (or "for billing, press 2") read against the agent's instructions and what it has
 * said. Null when the line is no menu, or no option (or more than one) fits.
 */
export function chooseInMenu(line: string, context: string): string | null {
  const options: { key: string; label: string }[] = []
  for (const m of line.matchAll(/\b(?:press|dial|enter)\s+([0-9*#])\s+(?:for|to)\s+([^,.;]+)/gi)) options.push({ key: m[1]!, label: m[2]! })
  // "For billing, press 2": read only when the menu does not name keys first (its "for X" belongs to the key before).
  if (options.length === 0) for (const m of line.matchAll(/\bfor\s+([^,.;]+?),?\s+(?:press|dial)\s+([0-9*#])\b/gi)) options.push({ key: m[2]!, label: m[1]! })
  if (options.length === 0) return null
  const wanted = terms(context)
  const fits = [...new Set(options.filter((o) => [...terms(o.label)].some((t) => wanted.has(t))).map((o) => o.key))]
  return fits.length === 1 ? fits[0]! : null
}
