/**
 * The `local` model's call summary: no model and no network, so it is built from the call's own
 * lines, in three sentences as docs/spec.md asks: why the call happened (the purpose without the
 * greeting and self-introduction it is spoken with), what the customer said or asked and the
 * agent's reply, and how the call ended. It quotes; it never paraphrases what it cannot read.
 */
import type { AnalysisRequest, TranscriptLine } from './analysis-types'
import { EMPTY_LINE } from './local-analysis'

/** A quoted line longer than this is cut at a word: a summary quotes, it does not transcribe. */
const QUOTE_MAX_CHARS = 160

/** "Hello Sam,", "Hi there!", "Good morning.": a name after the greeting is capitalised. */
const GREETING = /^(?:[Hh]i|[Hh]ello|[Hh]ey|[Hh]iya|[Gg]ood (?:morning|afternoon|evening)|[Dd]ear)(?:\s+there)?(?:\s+\p{Lu}[\p{L}'’-]*)?\s*[,!.]?\s*/u
/** Words that carry a call's reason after an introduction: "this is Ava calling about …". */
const REASON_VERB = String.raw`(?:calling|ringing|phoning|returning|following up|reaching out|getting back)\b`
/** "this is Ava from Bright Smile": a name (capitalised) or "the …", up to a reason verb or the clause's end. */
const INTRODUCTION = new RegExp(
  String.raw`^(?:[Tt]his is|[Ii]t['’]s|[Ii]t is|I['’]m|I am|[Mm]y name is|[Ww]e['’]re|[Ww]e are)\s+(?=\p{Lu}|the\s)[^,.!?]+?(?=\s+${REASON_VERB}|\s*[,.!?]|$)[,.!?]?\s*`,
  'u',
)
/** Lead-ins before the reason itself: "I'm calling", "we'd like", "just". */
const LEAD_INS: [RegExp, string][] = [
  [/^(?:i'm|i am|we're|we are|just)\s+(?=calling\b)/i, ''],
  [/^calling(?:\s+you)?\s+/i, ''],
  [/^(?:i|we)(?:'d| would) like to\s+/i, 'to '],
  [/^(?:i|we) wanted to\s+/i, 'to '],
]

function quote(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim()
  if (t.length <= QUOTE_MAX_CHARS) return t
  const cut = t.slice(0, QUOTE_MAX_CHARS)
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 1))}…`
}

const quoted = (text: string) => `"${quote(text)}"`
/** A sentence ends at its last quote's own stop, or gets one. */
const sentence = (text: string) => (/[.!?…]"?$/.test(text) ? text : `${text}.`)

const THEIRS: Record<string, string> = { your: 'their', yours: 'theirs', you: 'them' }
/** The customer as the summary names them: "your order" said to them is "their order". */
const aboutThem = (text: string) => text.replace(/\b(?:your|yours|you)\b/gi, (w) => THEIRS[w.toLowerCase()] ?? w)

/** What the spoken purpose says the call is for, without its greeting and introduction; '' when that is all it was. */
export function purposeOf(spoken: string): string {
  let rest = spoken.replace(/\s+/g, ' ').trim()
  for (let before = ''; before !== rest; ) {
    before = rest
    rest = rest.replace(GREETING, '').replace(INTRODUCTION, '')
  }
  for (const [lead, by] of LEAD_INS) rest = rest.replace(lead, by)
  return rest
}

/** The opening sentence's tail: " about their order", " to confirm …", ', returning their call', ' to say "…"'. */
function reason(purpose: string): string {
  const plain = aboutThem(purpose.replace(/[.!?]+$/, ''))
  if (/^(?:about|regarding|concerning)\s/i.test(purpose)) return ` ${plain.replace(/^(?:regarding|concerning)/i, 'about')}.`
  if (/^(?:to|because)\s/i.test(purpose)) return ` ${plain}.`
  if (/^\p{L}+ing\b/u.test(purpose)) return `, ${plain}.`
  return ` to say ${sentence(quoted(purpose))}`
}

const meant = (l: TranscriptLine) => !EMPTY_LINE.test(l.text)
const saidBy = (speaker: TranscriptLine['speaker']) => (l: TranscriptLine) => l.speaker === speaker && l.text.trim().length > 0
/** What the agent said, without the citation a knowledge answer ends with. */
const agentWords = (l: TranscriptLine) => l.text.replace(/\s*\(Source: [^)]*\)\s*$/, '')

export function localSummary(req: AnalysisRequest): string {
  const agent = req.agentName
  const purpose = req.purpose ? purposeOf(req.purpose) : ''
  const opening = req.direction === 'outbound' ? `${agent} called the customer${purpose ? reason(purpose) : '.'}` : `The customer called ${agent}.`
  const lines = req.transcript
  const customer = lines.filter(saidBy('customer'))
  if (customer.length === 0) return `${opening} The customer did not say anything.`
  // What the customer wanted: their first line that says something, and the agent's reply to it.
  const first = customer.find(meant) ?? customer[0]
  const at = lines.indexOf(first)
  const reply = lines.slice(at + 1).find(saidBy('agent'))
  const asked = (l: TranscriptLine) => (/\?\s*$/.test(l.text) ? 'asked' : 'said')
  const exchange = sentence(`The customer ${asked(first)} ${quoted(first.text)}${reply ? ` and ${agent} replied ${quoted(agentWords(reply))}` : ''}`)
  if (!reply) return `${opening} ${exchange} The call ended before ${agent} replied.`
  // How it ended: the last thing the customer said after that reply, and the agent's answer.
  const after = lines.slice(lines.indexOf(reply) + 1)
  const last = after.filter(saidBy('customer')).filter(meant).at(-1)
  if (!last) return `${opening} ${exchange} The call ended after that.`
  const lastReply = after.slice(after.indexOf(last) + 1).find(saidBy('agent'))
  const ending = sentence(
    `The call ended with the customer ${asked(last) === 'asked' ? 'asking' : 'saying'} ${quoted(last.text)}${lastReply ? ` and ${agent} replying ${quoted(agentWords(lastReply))}` : ''}`,
  )
  return `${opening} ${exchange} ${ending}`
}
