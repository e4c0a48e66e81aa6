/**
 * A service's refusal in the domain's words: why it would not do what it was asked (the input is
 * invalid, the thing is not there, it clashes with what is). Services throw these, not HTTP errors,
 * so a job, a simulation or a test can drive a service and branch on `reason` without HTTP; the
 * HTTP kernel maps each reason to its status in one place (src/http/refusals.ts).
 */
export type RefusalReason =
  /** The input is wrong (a field named). */
  | 'invalid'
  /** The caller is not who the request needs (a session that is not this widget's). */
  | 'unrecognised'
  /** The plan or the balance does not cover it. */
  | 'not_covered'
  | 'forbidden'
  | 'not_found'
  /** It clashes with the state things are in. */
  | 'conflict'
  /** It was there and is deleted for good (or until restored). */
  | 'gone'
  /** Too many, too fast: try again after `retryAfterSeconds`. */
  | 'too_many'
  /** A provider outside (a phone network, a vendor, a platform) refused or failed. */
  | 'upstream'
  /** Not now: a part is busy or still settling; try again after `retryAfterSeconds`. */
  | 'unavailable'
  /** This deployment does not offer it (a channel not built into this service). */
  | 'not_implemented'

export class Refused extends Error {
  override readonly name = 'Refused'
  constructor(
    readonly reason: RefusalReason,
    message: string,
    /** Members an answer carries beside the message (the offending `field`, a clashing `id`). */
    readonly details?: Record<string, unknown>,
    /** When trying again may succeed (`too_many`, `unavailable`). */
    readonly retryAfterSeconds?: number,
    /** What the answer says beside `Retry-After` about the limit it hit (a rate rule's `X-RateLimit-*`). */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }
}

/** The input is wrong; the message starts with the offending field (docs/spec.md Errors rule 1). */
export const invalid = (field: string, message: string) => new Refused('invalid', `${field}: ${message}`, { field })
export const notThere = (message: string) => new Refused('not_found', message)
export const clashes = (message: string, details?: Record<string, unknown>) => new Refused('conflict', message, details)
export const notAllowed = (message: string) => new Refused('forbidden', message)
export const unrecognised = (message: string, details?: Record<string, unknown>) => new Refused('unrecognised', message, details)
export const notCovered = (message: string, details?: Record<string, unknown>) => new Refused('not_covered', message, details)
export const gone = (message: string, details?: Record<string, unknown>) => new Refused('gone', message, details)
export const tooMany = (message: string, retryAfterSeconds: number, details?: Record<string, unknown>) => new Refused('too_many', message, details, retryAfterSeconds)
export const upstreamFailed = (message: string, details?: Record<string, unknown>) => new Refused('upstream', message, details)
export const unavailable = (message: string, retryAfterSeconds?: number, details?: Record<string, unknown>) => new Refused('unavailable', message, details, retryAfterSeconds)
export const notOffered = (message: string) => new Refused('not_implemented', message)

/** A required text that is only spaces is as good as missing: refused like an empty one. */
export function notBlank(value: string, field: string): string {
  if (value.trim() === '') throw invalid(field, 'must not be blank')
  return value
}

/** Whether `err` is a refusal (of `reason`, when given). */
export const isRefused = (err: unknown, reason?: RefusalReason): err is Refused => err instanceof Refused && (reason === undefined || err.reason === reason)
