import { randomBytes } from 'node:crypto'

// Crockford-style lowercase alphabet: no look-alike characters, safe in URLs and logs.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

/** 16 random characters = 80 bits: collisions are not a practical concern at our volumes. */
export function randomId(length = 16): string {
  const bytes = randomBytes(length)
  let out = ''
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] & 31]
  return out
}

/** Resource ids carry the prefix SPEC.md gives them (`ag_`, `org_`, `conv_`, …). */
export const newId = (prefix: string): string => `${prefix}_${randomId()}`
