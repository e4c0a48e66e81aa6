import { randomBytes } from 'node:crypto'

// Crockford-style lowercase alphabet: no look-alike characters, safe in URLs and logs, and its
// character order is its numeric order, so ids sort as their (time, sequence) does.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

/** 16 random characters = 80 bits: collisions are not a practical concern at our volumes. */
export function randomId(length = 16): string {
  const bytes = randomBytes(length)
  let out = ''
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] & 31]
  return out
}

const TIME_CHARS = 10 // 50 bits of milliseconds: good until the year 37,000
const RANDOM_CHARS = 10 // 50 bits, incremented within one millisecond (ULID's monotonic rule)

let lastTime = -1
let lastRandom: number[] = []

function encodeTime(ms: number): string {
  let out = ''
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[ms % 32] + out
    ms = Math.floor(ms / 32)
  }
  return out
}

/** Adds one to a base-32 digit array; wraps to fresh randomness in the (2^-50) overflow case. */
function increment(digits: number[]): number[] {
  const next = [...digits]
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++
      return next
    }
    next[i] = 0
  }
  return Array.from(randomBytes(RANDOM_CHARS), (b) => b & 31)
}

/**
 * Resource ids carry the prefix docs/spec.md gives them (`ag_`, `org_`, `conv_`, …), then a
 * ULID-like body: wall-clock milliseconds and a random part that only grows within a
 * millisecond. Lists order ties on `createdAt` by id, so newest-first stays creation order.
 */
export function newId(prefix: string): string {
  const now = Date.now()
  if (now === lastTime) lastRandom = increment(lastRandom)
  else {
    lastTime = now
    lastRandom = Array.from(randomBytes(RANDOM_CHARS), (b) => b & 31)
  }
  return `${prefix}_${encodeTime(now)}${lastRandom.map((d) => ALPHABET[d]).join('')}`
}
