/**
 * Post-call fields with no model and no network (the `local` model), read only where the customer
 * stated them — an answer to the agent's question about the field, or "my <field> is …", or keys
 * typed for the one field that takes them. It never guesses: a field it cannot find is left out,
 * as docs/spec.md asks of every model. Its summary is local-summary.ts.
 */

import { findEmail, findName, findPhone, terms } from '../../../providers/llm/local-text'
import { KEYPAD_LINE } from '../../../voice/public'
import type { TranscriptLine } from './analysis-types'
import { type FieldSpec, type FieldValue, fieldValue } from './field-values'
import { latestTypedEntry, takesTypedDigits } from './keypad-fields'

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  hundred: 100,
}
const NUMBER = new RegExp(String.raw`-?\d+(?:[.,]\d+)*|\b(?:${Object.keys(NUMBER_WORDS).join('|')})\b`, 'i')
const YES = /^\s*(?:yes|yeah|yep|yup|sure|correct|right|absolutely|definitely|of course|i do|i am|i have|i will)\b/i
const NO = /^\s*(?:no|nope|nah|not really|never|i don't|i do not|i'm not|i am not|i haven't|i won't)\b/i
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}\b/
/** Openers that are not part of an answer: "Sure, it's Priya" answers "Priya". */
const FILLER = /^\s*(?:(?:yes|yeah|sure|ok|okay|well|so|um|uh|hmm)[,.!]?\s+)*(?:it's|it is|that's|that is|i'd say|about|around)?\s*/i
/** Lines that carry nothing: greetings and bare acknowledgements. */
export const EMPTY_LINE = /^\s*(?:hi|hello|hey|yes|yeah|ok|okay|hmm|uh-huh|sure|thanks|thank you|bye|goodbye)[\s!.,?]*$/i

/** Words that name a field: its name split at camelCase and underscores, and its description. */
function fieldTerms(spec: FieldSpec): Set<string> {
  const name = spec.name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ')
  return terms(`${name} ${spec.description ?? ''}`)
}

const shares = (text: string, words: Set<string>): boolean => [...terms(text)].some((w) => words.has(w))

/** Customer lines paired with the agent line just before them (the question they answer). */
function answers(lines: TranscriptLine[]): { question: string; answer: string }[] {
  const out: { question: string; answer: string }[] = []
  let question = ''
  for (const l of lines) {
    if (l.speaker === 'agent') question = l.text
    else if (l.speaker === 'customer' && l.text.trim()) out.push({ question, answer: keyed(l.text) })
  }
  return out
}

/** Keys the customer pressed (`[keypad] 1234#`) read as what they typed: the digits, without the `#` that ended them. */
export function keyed(text: string): string {
  return text.replace(new RegExp(KEYPAD_LINE.source, 'g'), (_, keys: string) => (keys.length > 1 ? keys.replace(/#$/, '') : keys))
}

function firstNumber(text: string): number | undefined {
  const m = NUMBER.exec(text)?.[0]
  if (!m) return undefined
  const word = NUMBER_WORDS[m.toLowerCase()]
  if (word !== undefined) return word
  const n = Number(m.replace(/,/g, ''))
  return Number.isFinite(n) ? n : undefined
}

function mentionedChoice(text: string, choices: string[]): string | undefined {
  const found = choices.filter((c) => new RegExp(String.raw`(?:^|\W)${c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|\W)`, 'i').test(text))
  return found.length === 1 ? found[0] : undefined
}

/** "my <one of the field's words> is X" → X, up to the end of the clause. */
function selfStatement(text: string, words: Set<string>): string | undefined {
  for (const m of text.matchAll(/\bmy\s+([\p{L} ]{2,40}?)\s+(?:is|are|was)\s+([^.,;!?]+)/giu)) {
    if (shares(m[1], words)) return m[2].trim()
  }
  return undefined
}

function readField(spec: FieldSpec, lines: TranscriptLine[]): FieldValue | undefined {
  const words = fieldTerms(spec)
  const pairs = answers(lines)
  // Latest first: a customer who corrects themselves means the later answer.
  const related = pairs
    .filter((p) => shares(p.question, words))
    .map((p) => p.answer)
    .reverse()
  const customerLines = pairs.map((p) => p.answer).reverse()
  const inCustomer = <T>(read: (text: string) => T | undefined): T | undefined => {
    for (const text of customerLines) {
      const v = read(text)
      if (v !== undefined) return v
    }
    return undefined
  }

  if (spec.choices?.length) {
    const pick = (text: string) => mentionedChoice(text, spec.choices!)
    return fieldValue(spec, related.map(pick).find((v) => v !== undefined) ?? inCustomer(pick))
  }
  switch (spec.type) {
    case 'boolean': {
      const said = related.find((a) => YES.test(a) || NO.test(a))
      return said === undefined ? undefined : YES.test(said)
    }
    case 'number': {
      const stated = inCustomer((t) => selfStatement(t, words))
      const n = stated !== undefined ? firstNumber(stated) : undefined
      return n ?? related.map(firstNumber).find((v) => v !== undefined)
    }
    case 'date':
      return fieldValue(spec, related.map((a) => ISO_DATE.exec(a)?.[0]).find(Boolean) ?? inCustomer((t) => ISO_DATE.exec(t)?.[0]))
    case 'text': {
      if (words.has('email')) return fieldValue(spec, inCustomer(findEmail))
      if (words.has('phone') || words.has('mobile')) return fieldValue(spec, inCustomer(findPhone))
      if (words.has('name')) return fieldValue(spec, inCustomer((t) => selfStatement(t, words) ?? findName(t)) ?? related.map(bareAnswer).find(Boolean))
      return fieldValue(spec, inCustomer((t) => selfStatement(t, words)) ?? related.map(bareAnswer).find(Boolean))
    }
  }
}

/** The substance of an answer without its opener; nothing for a bare yes/no or a greeting. */
function bareAnswer(text: string): string | undefined {
  if (EMPTY_LINE.test(text) || /^\s*(?:no|nope|nah)[\s!.,]*$/i.test(text)) return undefined
  const rest = text
    .replace(FILLER, '')
    .replace(/[.!]+$/, '')
    .trim()
  return rest || undefined
}

export function localFields(specs: FieldSpec[], lines: TranscriptLine[]): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {}
  for (const spec of specs) {
    const v = readField(spec, lines)
    if (v !== undefined) out[spec.name] = v
  }
  // Keys typed with no question about them fill the one field that takes typed digits (keypad-fields.ts).
  const typed = specs.filter((spec) => takesTypedDigits(spec, fieldTerms(spec)))
  if (typed.length === 1 && out[typed[0].name] === undefined) {
    const keys = latestTypedEntry(lines, specs.filter((spec) => spec !== typed[0]).map(fieldTerms))
    const v = keys === undefined ? undefined : fieldValue(typed[0], keys)
    if (v !== undefined) out[typed[0].name] = v
  }
  return out
}
