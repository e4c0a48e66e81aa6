/** Field rules of a customer that a schema cannot say (docs/spec.md Customer, Limits). */

import type { MetadataValue } from '../../kernel/tenancy'
import { invalid } from '../../refusals'

/** docs/spec.md Limits: customer metadata. */
const METADATA_MAX_KEYS = 50
const METADATA_KEY_MAX = 40
const METADATA_STRING_MAX = 500
const METADATA_MAX_BYTES = 8 * 1024

export function checkMetadata(metadata: Record<string, MetadataValue>): void {
  const keys = Object.keys(metadata)
  if (keys.length > METADATA_MAX_KEYS) throw invalid('metadata', `has ${keys.length} keys; at most ${METADATA_MAX_KEYS}`)
  for (const key of keys) {
    // JSON may carry "__proto__" as a plain key; merged into an object it would vanish silently.
    if (key === '__proto__') throw invalid('metadata', 'key "__proto__" is not allowed')
    if (key.length < 1 || key.length > METADATA_KEY_MAX) {
      throw invalid('metadata', `key "${key.slice(0, 50)}" must be 1–${METADATA_KEY_MAX} characters`)
    }
    const value = metadata[key]
    if (typeof value === 'string' && value.length > METADATA_STRING_MAX) {
      throw invalid(`metadata.${key}`, `must be at most ${METADATA_STRING_MAX} characters`)
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw invalid(`metadata.${key}`, 'must be a finite number')
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata))
  if (bytes > METADATA_MAX_BYTES) throw invalid('metadata', `is ${bytes} bytes; at most 8 KB in all`)
}
