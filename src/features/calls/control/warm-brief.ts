/**
 * What a warm transfer's person hears before taking the call (docs/api/calls.md "Transfer"): who
 * is waiting and why, in a few seconds of speech. Who: the caller's contact name when we know it,
 * else their number. Why, without a model (the `local` model, or a vendor that failed or was too
 * slow: brief-writer.ts): the caller's own words — the first that said something and the latest —
 * and the fields the offline reader finds they stated. And what the agent tells the caller when the
 * person could not be connected.
 */
import type { TranscriptLine } from '../analysis/analysis-types'
import type { FieldSpec, FieldValue } from '../analysis/field-values'
import { EMPTY_LINE, keyed, localFields } from '../analysis/local-analysis'

/**
 * The caller's words in the brief: ~40 words is ~15 s of speech at a phone pace of 150 words a
 * minute, as long as a person will listen before deciding.
 */
export const BRIEF_WORDS_MAX = 40
/** Fields said in a brief: three short values keep it within those ~15 s. */
const BRIEF_FIELDS_MAX = 3

export interface BriefInput {
  agentName: string
  destination: string
  caller: { name: string | null; phone: string | null }
  transcript: TranscriptLine[]
  /** The agent's `collectFields`: what the caller stated of them is said too. */
  fields: FieldSpec[]
}

/** The brief's fixed opening: who calls, who is waiting, for whom. Never a model's words. */
export function briefOpening(input: Pick<BriefInput, 'agentName' | 'destination' | 'caller'>): string {
  const who = input.caller.name?.trim() || (input.caller.phone ? `a caller from ${spokenNumber(input.caller.phone)}` : 'a caller')
  return `Hello, this is ${input.agentName}. I have ${who} on the line for ${input.destination}.`
}

/** The best brief the transcript allows without a model: only what the caller said. */
export function localBrief(input: BriefInput): string {
  const parts = [briefOpening(input)]
  const said = callerWords(input.transcript)
  if (said.length === 1) parts.push(`They said: "${said[0]}"`)
  else if (said.length === 2) parts.push(`They said: "${said[0]}" And then: "${said[1]}"`)
  const given = givenFields(input)
  if (given) parts.push(`They gave ${given}.`)
  return parts.join(' ')
}

/**
 * What the caller said worth repeating, at most two quotes: the first line that said something
 * (usually why they called) and their latest (usually what they asked for), each keys read as
 * digits, together cut to BRIEF_WORDS_MAX words (the first from its end, the latest from its start).
 */
export function callerWords(transcript: TranscriptLine[]): string[] {
  const lines = transcript.filter((l) => l.speaker === 'customer' && l.text.trim()).map((l) => keyed(l.text).replace(/\s+/g, ' ').trim())
  const meant = lines.filter((t) => !EMPTY_LINE.test(t))
  const chosen = meant.length === 0 ? lines.slice(-1) : meant.length === 1 ? meant : [meant[0]!, meant[meant.length - 1]!]
  if (chosen.length === 0) return []
  if (chosen.length === 1) return [firstWords(chosen[0]!, BRIEF_WORDS_MAX, 'end')]
  const half = BRIEF_WORDS_MAX / 2
  return [firstWords(chosen[0]!, half, 'start'), firstWords(chosen[1]!, half, 'end')]
}

/** At most `max` words of `text`: `start` keeps its beginning, `end` its end, marking the cut. */
function firstWords(text: string, max: number, keep: 'start' | 'end'): string {
  const words = text.split(' ')
  if (words.length <= max) return text
  return keep === 'start' ? `${words.slice(0, max).join(' ')} …` : `… ${words.slice(-max).join(' ')}`
}

/** "their account number: 4 4 7 1; preferred day: Friday", from what the caller stated; null when none. */
function givenFields(input: BriefInput): string | null {
  if (input.fields.length === 0) return null
  const found = Object.entries(localFields(input.fields, input.transcript)).slice(0, BRIEF_FIELDS_MAX)
  if (found.length === 0) return null
  return found.map(([name, value], i) => `${i === 0 ? 'their ' : ''}${fieldWords(name)}: ${spokenValue(value)}`).join('; ')
}

/** `accountNumber` / `account_number` → "account number". */
const fieldWords = (name: string): string =>
  name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim()

/** A value as said: yes / no, digits one by one (an account number is not an amount). */
function spokenValue(value: FieldValue): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  const text = String(value).trim()
  return /^[\d\s+-]{4,}$/.test(text) ? spokenNumber(text) : text
}

/** A number read digit by digit ("+1 415 555 0777" → "1 4 1 5 …"), so a text-to-speech voice does not say it as an amount. */
function spokenNumber(phone: string): string {
  return phone.replace(/\D/g, '').split('').join(' ')
}

/** What the agent tells the caller, back from a warm transfer that did not connect (`outcome` not answered). */
export function warmMissed(name: string, outcome: string): string {
  const what: Record<string, string> = {
    no_answer: `${name} didn't pick up`,
    busy: `${name} is on another call`,
    declined: `${name} can't take the call right now`,
    failed: `I couldn't reach ${name}`,
  }
  return `I'm sorry, ${what[outcome] ?? what.failed}. I'm still here with you: is there anything else I can help you with?`
}
