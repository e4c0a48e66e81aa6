/**
 * Releasing an idempotency claim on Redis, even when Redis cannot answer at that moment. A request
 * that failed server-side (5xx, "nothing was done; retry") releases its key; a release lost to a
 * stalled or dropped connection, or a claim written by a command whose answer was lost (the request
 * already told 503), would leave the key held, and the retry answered 409 until the claim lapsed
 * (IN_FLIGHT_TTL_MS, two minutes).
 *
 * So a release is sent until Redis answers it: it waits in the connection's queue while Redis is
 * stalled (Redis runs it, after the claim, as soon as it resumes) and is sent again after a dropped
 * connection. That is safe because a release deletes the key only while it still holds this
 * owner's in-flight claim: sent twice or late, it never frees another request's claim or a stored
 * answer. A short claim that the request extends once it runs was the other way; it still answers
 * 409 for its own length after an outage, and turns a slow Redis into lost claims.
 */
import { ClientClosedError } from 'redis'
import { isUnavailable } from './unavailable'

/**
 * How long to wait before sending a release again after its connection dropped: node-redis's
 * reconnect backoff cap (redis.ts RECONNECT_MAX_MS), so each retry meets a connection that had
 * its chance to come back; meanwhile the command waits in the client's offline queue anyway.
 */
export const RELEASE_RETRY_MS = 2_000

export interface ClaimReleases {
  /** Resolves once Redis has answered the release (freed the claim, or found it not this owner's). */
  release(key: string, owner: string): Promise<void>
  /** Releases still waiting for Redis (readiness, tests). */
  pending(): number
}

/**
 * `send` runs the compare-and-delete once, unbounded (it settles when Redis answers or the
 * connection drops); `closed` says the adapter is closing, which ends the retries; `onError`
 * hears a release that failed for another reason than an outage (a script bug: no retry mends it).
 */
export function claimReleases(send: (key: string, owner: string) => Promise<unknown>, closed: () => boolean, onError: (err: unknown) => void): ClaimReleases {
  // One attempt chain per claim: a second release of the same claim joins the first.
  const inFlight = new Map<string, Promise<void>>()

  async function untilAnswered(key: string, owner: string): Promise<void> {
    for (;;) {
      try {
        await send(key, owner)
        return
      } catch (error) {
        if (closed() || error instanceof ClientClosedError) throw error
        if (!isUnavailable(error)) {
          onError(error)
          throw error
        }
      }
      await Bun.sleep(RELEASE_RETRY_MS)
    }
  }

  return {
    release(key, owner) {
      const id = `${key}\n${owner}`
      let chain = inFlight.get(id)
      if (!chain) {
        chain = untilAnswered(key, owner).finally(() => inFlight.delete(id))
        inFlight.set(id, chain)
      }
      return chain
    },
    pending: () => inFlight.size,
  }
}
