/**
 * Phone numbers in one form (E.164) so every spelling of a number reaches the same contact
 * (docs/spec.md Calls: "normalised like the contact importer"). Parsing is libphonenumber-js's.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max'

/**
 * Parses remembered by input: libphonenumber-js takes ~50 µs a number, and a call parses the same
 * numbers several times (the request's `to`, the contact lookup, the callee check). 10,000 numbers
 * is a few MB at most; the memory is simply dropped when full (a parse is only ever repeated).
 */
const MEMO_MAX = 10_000
const memo = new Map<string, string | null>()

/**
 * What is read, said in every refusal of a number. A national spelling (`(415) 555-0123`,
 * `020 7946 0018`) is not: nothing here says which country it is in (a workspace has no country).
 */
export const PHONE_SPELLINGS =
  'give it with its country code: +1 415 555 0123, +1 (415) 555-0123, 0044 20 7946 0018, or the digits alone when they are a valid number with its country code (14155550123); a national spelling such as (415) 555-0123 is not read'

/** The refusal of a number that is not read, quoting it (cut to 40 characters). */
export const unreadablePhone = (input: string): string => `"${input.slice(0, 40)}" is not a phone number we can read: ${PHONE_SPELLINGS}`

/** `+91 98765 43210`, `0091 98765 43210`, `919876543210`, `+1 (415) 555-0100` → E.164, or null when unreadable. */
export function normalizePhone(input: string): string | null {
  let result = memo.get(input)
  if (result !== undefined) return result
  result = parse(input)
  if (memo.size >= MEMO_MAX) memo.clear()
  memo.set(input, result)
  return result
}

/**
 * With `+` or `00` the country code is marked, and a number of a possible length for its country
 * is taken (a range newer than libphonenumber's metadata still reads). Bare digits may be a
 * national spelling whose first digits read as some other country's code (`2025550123` is
 * Washington's, and +20 is Egypt's): they are taken only when they make a valid number.
 */
function parse(input: string): string | null {
  const cleaned = input.trim().replace(/[\s().-]/g, '')
  if (!/^(\+|00)?\d{6,16}$/.test(cleaned)) return null
  const marked = cleaned.startsWith('+') || cleaned.startsWith('00')
  const parsed = parsePhoneNumberFromString(`+${cleaned.replace(/^(\+|00)/, '')}`)
  if (!parsed || !(marked ? parsed.isPossible() : parsed.isValid())) return null
  return parsed.number
}
