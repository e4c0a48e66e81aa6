/**
 * Phone numbers in one form (E.164) so every spelling of a number reaches the same contact
 * (SPEC.md Calls: "normalised like the contact importer"). Parsing is libphonenumber-js's.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max'

/** `+91 98765 43210`, `919876543210`, `+1 (415) 555-0100` → E.164, or null when unreadable. */
export function normalizePhone(input: string): string | null {
  const cleaned = input.trim().replace(/[\s().-]/g, '')
  if (!/^\+?\d{6,16}$/.test(cleaned)) return null
  const parsed = parsePhoneNumberFromString(cleaned.startsWith('+') ? cleaned : `+${cleaned}`)
  if (!parsed || !parsed.isPossible()) return null
  return parsed.number
}
