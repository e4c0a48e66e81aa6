/**
 * Requests that fail because a shared part is out of service are told so, with the cause and when
 * to retry, instead of a bare 500: coordination (Redis) down or stalled is 503 with Retry-After,
 * the store's disk full is 507 Insufficient Storage. Either way nothing was done (a write that
 * failed was rolled back), and an Idempotency-Key it held is released for the retry.
 */
import { CoordinationUnavailable } from '../coordination/unavailable'
import { isOutOfSpace } from '../store/out-of-space'
import { ApiError } from './errors'

/**
 * node-redis reconnects within 2 s of Redis coming back (coordination/redis.ts RECONNECT_MAX_MS);
 * 5 s is that plus the readiness interval of a typical load balancer (5–10 s), the same wait
 * draining asks for (draining-gate.ts).
 */
export const COORDINATION_RETRY_AFTER_S = 5
/** A full disk needs an operator; a minute spares the service a retry storm meanwhile. */
export const DISK_FULL_RETRY_AFTER_S = 60

/** How deep to look through `cause` chains (a feature that wraps a store error keeps it as the cause). */
const MAX_CAUSES = 5

function causes(error: unknown): unknown[] {
  const chain: unknown[] = []
  let current = error
  while (current && chain.length < MAX_CAUSES) {
    chain.push(current)
    current = (current as { cause?: unknown }).cause
  }
  return chain
}

/** The refusal for an outage behind `error`, or null when it is not one. */
export function outageRefusal(error: unknown): ApiError | null {
  for (const e of causes(error)) {
    if (isOutOfSpace(e)) {
      return new ApiError(507, 'the store is out of disk space: nothing was saved; retry once the operator has freed space', undefined, {
        'retry-after': String(DISK_FULL_RETRY_AFTER_S),
      })
    }
    if (e instanceof CoordinationUnavailable) {
      return new ApiError(503, `coordination is unavailable (${e.message}): nothing was done; retry shortly`, undefined, {
        'retry-after': String(COORDINATION_RETRY_AFTER_S),
      })
    }
  }
  return null
}
