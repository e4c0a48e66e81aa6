/**
 * Time zone names, shared by every feature that takes one (workspaces, customers, call totals):
 * IANA names only, in their canonical spelling.
 */
import { invalid } from './refusals'

const zoneCache = new Map<string, string | null>()
// IANA names only: Intl also takes raw offsets ("+05:30", "GMT+5"), which have no DST rules and are
// not names. Canonical names come from Intl; links such as Asia/Calcutta have the Area/Location form.
const IANA_ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])
const AREA_LOCATION = /^[A-Za-z]+(?:\/[A-Za-z0-9_+-]+)+$/

/** An IANA time zone name in its canonical spelling, or a 400 naming `field`. */
export function checkTimezone(zone: string, field = 'timezone'): string {
  let canonical = zoneCache.get(zone)
  if (canonical === undefined) {
    try {
      const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone
      canonical = IANA_ZONES.has(resolved) || AREA_LOCATION.test(resolved) ? resolved : null
    } catch {
      canonical = null
    }
    // Only names that exist are remembered: the set is finite, while refused input is not.
    if (canonical) zoneCache.set(zone, canonical)
  }
  if (!canonical) throw invalid(field, `"${zone}" is not an IANA time zone name (for example Asia/Kolkata)`)
  return canonical
}
