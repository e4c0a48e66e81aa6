/**
 * Date and instant filters (docs/spec.md Conventions rule 2): an ISO 8601 instant, or a date alone
 * meaning the start of that UTC day. A calendar date that does not exist (2026-02-30) is refused,
 * not rolled over into the next month as `Date.parse` would. Services check their instants with it,
 * so its refusal is a domain one (400 naming the field).
 */
import { invalid } from './refusals'

const SHAPE = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/

/** The instant as an ISO string in UTC with milliseconds (the form the stores compare). */
export function checkInstant(value: string, field: string): string {
  const m = SHAPE.exec(value)
  const [year, month, day] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0]
  const calendar = new Date(Date.UTC(year, month - 1, day))
  const real = m !== null && calendar.getUTCFullYear() === year && calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day
  const ms = real ? Date.parse(value.length === 10 ? `${value}T00:00:00.000Z` : value) : Number.NaN
  if (Number.isNaN(ms)) {
    throw invalid(field, 'must be an ISO 8601 instant or date (for example 2026-11-21 or 2026-11-21T09:30:00Z)')
  }
  return new Date(ms).toISOString()
}
