/**
 * The one mapping from a service's domain refusal (src/refusals.ts) to its HTTP answer.
 * The error plugin and the idempotency store read every thrown error through `apiErrorOf`, so a
 * route lets a service's refusal through and it answers as if the route had thrown the ApiError.
 */
import { type RefusalReason, Refused } from '../refusals'
import { ApiError } from './errors'

const STATUS: Record<RefusalReason, number> = {
  invalid: 400,
  unrecognised: 401,
  not_covered: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_many: 429,
  upstream: 502,
  unavailable: 503,
  not_implemented: 501,
}

/** The HTTP refusal `error` answers as, or null when it is no refusal (a bug, an outage). */
export function apiErrorOf(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error
  if (error instanceof Refused) return new ApiError(STATUS[error.reason], error.message, error.details, headersOf(error))
  return null
}

/** The refusal's own headers, then `Retry-After` in whole seconds, at least 1 (RFC 9110 delay-seconds). */
function headersOf({ headers, retryAfterSeconds: seconds }: Refused): Record<string, string> | undefined {
  if (seconds === undefined) return headers
  return { ...headers, 'retry-after': String(Math.max(1, Math.ceil(seconds))) }
}
