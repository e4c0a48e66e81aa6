/** Field rules of a customer that a schema cannot say (SPEC.md Customer, Limits). */
import { badRequest } from '../../http/errors'
import type { MetadataValue } from '../workspaces/repository'

/** SPEC.md Limits: customer metadata. */
const METADATA_MAX_KEYS = 50
const METADATA_KEY_MAX = 40
const METADATA_STRING_MAX = 500
const METADATA_MAX_BYTES = 8 * 1024

export function checkMetadata(metadata: Record<string, MetadataValue>): void {
  const keys = Object.keys(metadata)
  if (keys.length > METADATA_MAX_KEYS) throw badRequest('metadata', `has ${keys.length} keys; at most ${METADATA_MAX_KEYS}`)
  for (const key of keys) {
    // JSON may carry "__proto__" as a plain key; merged into an object it would vanish silently.
    if (key === '__proto__') throw badRequest('metadata', 'key "__proto__" is not allowed')
    if (key.length < 1 || key.length > METADATA_KEY_MAX) {
      throw badRequest('metadata', `key "${key.slice(0, 50)}" must be 1–${METADATA_KEY_MAX} characters`)
    }
    const value = metadata[key]
    if (typeof value === 'string' && value.length > METADATA_STRING_MAX) {
      throw badRequest(`metadata.${key}`, `must be at most ${METADATA_STRING_MAX} characters`)
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw badRequest(`metadata.${key}`, 'must be a finite number')
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata))
  if (bytes > METADATA_MAX_BYTES) throw badRequest('metadata', `is ${bytes} bytes; at most 8 KB in all`)
}

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
  if (!canonical) throw badRequest(field, `"${zone}" is not an IANA time zone name (for example Asia/Kolkata)`)
  return canonical
}
