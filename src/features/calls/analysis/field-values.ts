/**
 * The fields a call's analysis may record, and the one gate every extracted value passes:
 * typed as the requester asked, or left out. docs/spec.md Call `fields`: "a field not answered is
 * absent (never null or a placeholder string)". A model that answers "unknown" or "N/A" for a
 * text field, or "five-ish" for a number, has not answered it.
 */

/** The field kinds agents' `collectFields` and a call's `extract` accept (agents/model.ts FIELD_TYPES). */
export type FieldType = 'text' | 'number' | 'boolean' | 'date'

export interface FieldSpec {
  name: string
  type: FieldType
  description: string | null
  choices: string[] | null
}

export type FieldValue = string | number | boolean

/** Text a model writes when it has nothing: never a value (compared lower-case, trimmed, without final punctuation). */
const PLACEHOLDERS = new Set([
  '',
  'unknown',
  'n/a',
  'na',
  'none',
  'null',
  'nil',
  'undefined',
  'not provided',
  'not stated',
  'not mentioned',
  'not given',
  'not specified',
  'not available',
  'no answer',
  'unanswered',
  '-',
  '—',
  '?',
  'tbd',
  'not applicable',
])

const YES = /^(?:yes|yeah|yep|yup|sure|true|correct|right|affirmative|absolutely|definitely|of course)$/i
const NO = /^(?:no|nope|nah|false|not really|negative|never)$/i
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

const isPlaceholder = (s: string): boolean =>
  PLACEHOLDERS.has(
    s
      .trim()
      .toLowerCase()
      .replace(/[.!]+$/, ''),
  )

/** A finite number from a number or a plain decimal string ("1,200" and "12.5" read; "five-ish" does not). */
function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value !== 'string') return undefined
  const s = value.trim().replace(/,(?=\d{3}\b)/g, '')
  return /^-?\d+(?:\.\d+)?$/.test(s) ? Number(s) : undefined
}

function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value
  if (typeof value !== 'string') return undefined
  const s = value.trim().replace(/[.!]+$/, '')
  if (YES.test(s)) return true
  if (NO.test(s)) return false
  return undefined
}

/** A calendar date that exists, as `YYYY-MM-DD`. */
function toDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const m = ISO_DATE.exec(value.trim())
  if (!m) return undefined
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.toISOString().slice(0, 10) === value.trim() ? value.trim() : undefined
}

/** The requester's own spelling of a choice, matched without regard to case or spacing. */
function toChoice(value: unknown, choices: string[]): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined
  const wanted = String(value).trim().toLowerCase().replace(/\s+/g, ' ')
  return choices.find((c) => c.trim().toLowerCase().replace(/\s+/g, ' ') === wanted)
}

/** The value typed as `spec` asks, or undefined when `value` does not answer the field. */
export function fieldValue(spec: FieldSpec, value: unknown): FieldValue | undefined {
  if (value === null || value === undefined) return undefined
  if (typeof value === 'string' && isPlaceholder(value)) return undefined
  if (spec.choices && spec.choices.length > 0 && spec.type === 'text') return toChoice(value, spec.choices)
  switch (spec.type) {
    case 'number': {
      const n = toNumber(value)
      if (n === undefined || !spec.choices?.length) return n
      return spec.choices.some((c) => toNumber(c) === n) ? n : undefined
    }
    case 'boolean':
      return toBoolean(value)
    case 'date':
      return toDate(value)
    case 'text':
      return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : undefined
  }
}

/** Every answered field of `specs` found in `raw`, keyed by the requester's names; the rest absent. */
export function typedFields(specs: FieldSpec[], raw: Record<string, unknown>): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {}
  for (const spec of specs) {
    if (!Object.hasOwn(raw, spec.name)) continue
    const v = fieldValue(spec, raw[spec.name])
    if (v !== undefined) out[spec.name] = v
  }
  return out
}
