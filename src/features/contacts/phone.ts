/**
 * Phone numbers in one form (E.164) so every spelling of a number reaches the same contact
 * (SPEC.md Calls: "normalised like the contact importer"). Parsing is libphonenumber-js's.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max'

/**
 * Parses remembered by input: libphonenumber-js takes ~50 µs a number, and a call parses the same
 * numbers several times (the request's `to`, the contact lookup, the callee check). 10,000 numbers
 * is a few MB at most; the memory is simply dropped when full (a parse is only ever repeated).
 */
const MEMO_MAX = 10_000
const memo = new Map<string, string | null>()

/** `+91 98765 43210`, `919876543210`, `+1 (415) 555-0100` → E.164, or null when unreadable. */
export function normalizePhone(input: string): string | null {
  let result = memo.get(input)
  if (result !== undefined) return result
  result = parse(input)
  if (memo.size >= MEMO_MAX) memo.clear()
  memo.set(input, result)
  return result
}

function parse(input: string): string | null {
  const cleaned = input.trim().replace(/[\s().-]/g, '')
  if (!/^\+?\d{6,16}$/.test(cleaned)) return null
  const parsed = parsePhoneNumberFromString(cleaned.startsWith('+') ? cleaned : `+${cleaned}`)
  if (!parsed || !parsed.isPossible()) return null
  return parsed.number
}
