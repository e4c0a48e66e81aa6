/**
 * Text helpers for the local responder (local.ts): spotting contact details and requests for a
 * person, picking the sentences of a passage that answer a question, and finding the greeting.
 * Answers from the business's own instructions and steps: local-facts.ts.
 * Deliberately simple and deterministic: the same input always gives the same output.
 */

export const DEFAULT_GREETING = 'Hello! How can I help you today?'

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/
const PHONE_CANDIDATE = /\+?\(?\d[\d\s().-]{5,}\d/g
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/

export function findEmail(text: string): string | undefined {
  return EMAIL.exec(text)?.[0]
}

/** 7–15 digits (E.164 allows 15; 7 is the shortest local number worth a callback). */
export function findPhone(text: string): string | undefined {
  for (const m of text.matchAll(PHONE_CANDIDATE)) {
    const raw = m[0].trim()
    if (ISO_DATE.test(raw)) continue
    const digits = raw.replace(/\D/g, '')
    if (digits.length >= 7 && digits.length <= 15) return (raw.startsWith('+') ? '+' : '') + digits
  }
  return undefined
}

const NAME_LEAD = /\b(?:my name is|my name's|name is|i am|i'm|this is|call me)\s+/gi
const NAME = /^([A-Z][\p{L}'’-]+(?:\s+[A-Z][\p{L}'’-]+){0,2})/u
/** Capitalised words that follow "I'm …" without being a name. */
const NOT_NAMES = new Set(['Looking', 'Interested', 'Calling', 'Writing', 'Trying', 'Not', 'Just', 'Here', 'Sorry', 'Sure', 'Fine', 'Good', 'Ok', 'Okay'])

export function findName(text: string): string | undefined {
  for (const m of text.matchAll(NAME_LEAD)) {
    const rest = text.slice((m.index ?? 0) + m[0].length)
    const name = NAME.exec(rest)?.[1]
    if (name && !NOT_NAMES.has(name.split(/\s+/)[0])) return name
  }
  return undefined
}

const WHO = `(?:a |an |the |your |some )?(?:real |live |actual )?(?:human|person|agent|manager|representative|rep|operator|supervisor|team member|staff member)s?`
const WHO_OR_SOMEONE = `(?:${WHO}|someone|somebody|anyone)`
const PERSON_PATTERNS = [
  // "can I talk to a person", "connect me with someone", "transfer me to your manager"
  new RegExp(String.raw`\b(?:speak|talk|chat|connect|transfer|put)\b[^.?!]{0,25}?\b(?:to|with|through to)\s+${WHO_OR_SOMEONE}\b`, 'i'),
  // "I want a human", "get me a manager", "need a real person"
  new RegExp(String.raw`\b(?:want|need|get|give)\b(?:\s+me)?\s+${WHO}\b`, 'i'),
  // the whole message is the request: "human", "agent please", "Representative!"
  new RegExp(String.raw`^\s*${WHO}(?:\s+please)?[.!]*\s*$`, 'i'),
  /\bescalate\b/i,
]

export function asksForPerson(text: string): boolean {
  return PERSON_PATTERNS.some((p) => p.test(text))
}

const GREETING_WORDS = /^\s*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|namaste)\b[\s!.,]*(?:there)?[\s!.,]*$/i

export function isSmallTalkGreeting(text: string): boolean {
  return GREETING_WORDS.test(text)
}

/**
 * The greeting the engine put in the system prompt, on its own line as `Greeting: …`
 * (case-insensitive, optionally quoted).
 */
export function greetingFrom(system: string): string {
  const m = /^\s*greeting\s*[:=]\s*(.+?)\s*$/im.exec(system)
  const g = m?.[1].replace(/^["'“]|["'”]$/g, '').trim()
  return g || DEFAULT_GREETING
}

const STOP = new Set(
  'a an and are as at be but by can could do does for from had has have how i if in is it its me my of on or our so than that the their them then there these they this to was we what when where which who why will with would you your'.split(
    ' ',
  ),
)

export function terms(text: string): Set<string> {
  const out = new Set<string>()
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (w.length < 2 || STOP.has(w)) continue
    out.add(w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w) // "refunds" finds "refund"
  }
  return out
}

export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean)
}

/**
 * A short line without closing punctuation that more text follows: a section heading. The test
 * and both bounds are knowledge/chunking.ts `isHeading`'s, so what the chunker put at the top of a
 * passage as its heading is recognised here (a question line counts: FAQ pages title answers so).
 */
const HEADING_MAX_CHARS = 100
const HEADING_MAX_WORDS = 14
export function isHeadingLine(line: string): boolean {
  const l = line.trim()
  return l.length > 0 && l.length <= HEADING_MAX_CHARS && !/^([-*•]|\d+[.)])\s/.test(l) && !/[.!,;:]$/.test(l) && l.split(/\s+/).length <= HEADING_MAX_WORDS
}

/** The passage without its first line when that line is its section heading: context, not an answer. */
function withoutHeading(passage: string): string {
  const text = passage.trim()
  const nl = text.indexOf('\n')
  if (nl < 0) return text
  const rest = text.slice(nl + 1).trim()
  return rest && isHeadingLine(text.slice(0, nl)) ? rest : text
}

/**
 * The one or two sentences of `passage` sharing most words with `query`, in their own order.
 * A leading section heading is left out (passages start with theirs), so "Refunds" is not
 * repeated in front of "Refunds are paid within 14 days".
 */
export function bestSentences(passage: string, query: string): string {
  const sents = splitSentences(withoutHeading(passage))
  if (!sents.length) return ''
  const q = terms(query)
  const scored = sents.map((s, i) => {
    let score = 0
    for (const t of terms(s)) if (q.has(t)) score++
    return { i, s, score }
  })
  const ranked = [...scored].sort((a, b) => b.score - a.score || a.i - b.i)
  if (ranked[0].score === 0) return sents[0]
  const picked = ranked.slice(0, 2).filter((x, k) => k === 0 || x.score > 0)
  return picked
    .sort((a, b) => a.i - b.i)
    .map((x) => x.s)
    .join(' ')
}

/** ≈4 characters a token (the usual rule of thumb for English with OpenAI/Anthropic tokenisers). */
export const CHARS_PER_TOKEN = 4

export const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN)

/** Cuts at a word boundary so the text fits `maxTokens`. */
export function fitTokens(text: string, maxTokens: number | undefined): { text: string; cut: boolean } {
  if (maxTokens === undefined) return { text, cut: false }
  const limit = Math.max(1, Math.floor(maxTokens)) * CHARS_PER_TOKEN
  if (text.length <= limit) return { text, cut: false }
  const head = text.slice(0, limit)
  const space = head.lastIndexOf(' ')
  return { text: (space > 0 ? head.slice(0, space) : head).trimEnd(), cut: true }
}
