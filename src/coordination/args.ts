/**
 * Argument checks shared by both coordination adapters, so they refuse (and round) the same
 * inputs: a value one adapter accepts and the other rejects would be a contract difference that
 * only shows up in production.
 */

/** Whole positive milliseconds. Redis PX/PEXPIRE reject 0, negatives and fractions, so fractions
 *  round up (a ttl never gets shorter) and the rest are refused up front with a clear message. */
export function durationMs(name: string, ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new RangeError(`${name} must be a positive number of milliseconds, got ${ms}`)
  }
  return Math.ceil(ms)
}

/** An epoch-ms instant from the service clock. */
export function instantMs(name: string, ms: number): number {
  if (!Number.isFinite(ms)) throw new RangeError(`${name} must be a finite epoch-ms number, got ${ms}`)
  return ms
}

/** A count such as a rate limit or a claim batch size: a non-negative integer. */
export function countArg(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`)
  return n
}

/** Payloads are stored as JSON; `undefined` (which JSON cannot hold) is kept as null. */
export const encodePayload = (payload: unknown): string => JSON.stringify(payload ?? null)

/** Runs a subscriber's handler so that its exception cannot break delivery to other handlers
 *  (or, on Redis, the client's socket reader). */
export function deliver(handler: (message: string) => void, message: string, onError: (err: unknown) => void): void {
  try {
    handler(message)
  } catch (err) {
    onError(err)
  }
}

export const logHandlerError = (err: unknown): void => {
  console.error('coordination: a subscription handler threw', err)
}
