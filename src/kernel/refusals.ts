/**
 * A service's refusal in the domain's words: why it would not do what it was asked (the input is
 * invalid, the thing is not there, it clashes with what is). Services throw these, not HTTP errors,
 * so a job, a simulation or a test can drive a service and branch on `reason` without HTTP; the
 * HTTP kernel maps each reason to its status in one place (src/http/refusals.ts).
 */
export type RefusalReason = 'invalid' | 'not_found' | 'conflict' | 'forbidden'

export class Refused extends Error {
  override readonly name = 'Refused'
  constructor(
    readonly reason: RefusalReason,
    message: string,
    /** Members an answer carries beside the message (the offending `field`, a clashing `id`). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
}

/** The input is wrong; the message starts with the offending field (docs/spec.md Errors rule 1). */
export const invalid = (field: string, message: string) => new Refused('invalid', `${field}: ${message}`, { field })
export const notThere = (message: string) => new Refused('not_found', message)
export const clashes = (message: string, details?: Record<string, unknown>) => new Refused('conflict', message, details)
export const notAllowed = (message: string) => new Refused('forbidden', message)

/** Whether `err` is a refusal (of `reason`, when given). */
export const isRefused = (err: unknown, reason?: RefusalReason): err is Refused => err instanceof Refused && (reason === undefined || err.reason === reason)
