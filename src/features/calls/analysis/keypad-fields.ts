/**
 * Keys a caller typed (`[keypad] 40521#`) read into a field the agent's line before them did not
 * name (the `local` model): a caller who types a number without being asked for it, or after a
 * line about something else, typed it for the one field that takes typed digits. Where several
 * fields could take it, the keys fill none: the analysis never guesses (docs/api/calls.md, Keypad).
 */

import { terms } from '../../../providers/llm/local-text'
import { KEYPAD_LINE } from '../../../voice/public'
import type { TranscriptLine } from './analysis-types'
import type { FieldSpec } from './field-values'

/** Words that say a text field holds something typed on a keypad: an account number, a PIN, a booking reference. */
const TYPED = new Set(['number', 'code', 'pin', 'id', 'digit', 'account', 'reference', 'ref', 'zip', 'postcode', 'extension', 'passcode', 'otp'])

/** Whether `spec` can hold a typed entry: a number, or a text field named for digits; never a field of choices (a menu's key). */
export function takesTypedDigits(spec: FieldSpec, words: Set<string>): boolean {
  if (spec.choices?.length) return false
  return spec.type === 'number' || (spec.type === 'text' && [...words].some((w) => TYPED.has(w)))
}

/**
 * The keys of the caller's latest typed entry (two keys or more: one key is a menu's choice), the
 * `#` that ended it dropped, unless the agent's line before it named one of `otherFields` (those
 * keys answered that field's question). Undefined when there is none.
 */
export function latestTypedEntry(lines: TranscriptLine[], otherFields: Set<string>[]): string | undefined {
  let question = ''
  let latest: string | undefined
  for (const l of lines) {
    if (l.speaker === 'agent') question = l.text
    if (l.speaker !== 'customer') continue
    const keys = KEYPAD_LINE.exec(l.text)?.[1]
    if (!keys || keys.length < 2) continue
    const asked = terms(question)
    if (otherFields.some((words) => [...words].some((w) => asked.has(w)))) continue
    latest = keys.replace(/#$/, '')
  }
  return latest
}
