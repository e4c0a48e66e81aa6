/**
 * A brake on failed authentication, per client address: past AUTH_FAILURES_PER_MINUTE refused
 * credentials (401s to requests that sent an Authorization header) in a minute, every request from
 * that address that sends one is refused with 429, `Retry-After` and `X-RateLimit-*`, until the
 * minute's window ends, a right key included: a guesser learns nothing more from that address.
 * Keys carry 160 bits, so this is about cost and noise rather than guessing.
 *
 * Failures are counted in the coordination store, so every instance counts together; each instance
 * remembers the addresses it saw go past the limit, so a request that is not refused costs no
 * round trip (an instance that has not yet seen an address fail lets one more attempt through).
 * Counting is in wall-clock time: an operational brake, like the body deadlines, not a billing rule.
 * Behind a proxy every client has the proxy's address: such a deployment raises the limit or turns
 * it off (0) and brakes at the proxy.
 */
import { Elysia } from 'elysia'
import type { Coordination, RateHit } from '../coordination/port'
import type { Refused } from '../refusals'
import { rateLimited } from './rate-limit'

const WINDOW_MS = 60_000
/** Addresses remembered as past the limit at once; beyond it the oldest are forgotten (they may fail once more). */
const MAX_REMEMBERED = 10_000

export class AuthThrottle {
  /** Address → its refused window (the hit that went past the limit). */
  private readonly over = new Map<string, RateHit>()

  constructor(
    private readonly coordination: Coordination,
    /** Failed authentications a minute per address; 0: no brake (config's AUTH_FAILURES_PER_MINUTE). */
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The 429 for a request from an address past the limit, or null. The address is asked for only
   * when some address is over the limit: reading it costs every request otherwise.
   */
  refusal(request: Request, clientOf: ClientOf): Refused | null {
    if (this.limit === 0 || this.over.size === 0 || !request.headers.has('authorization')) return null
    const address = clientOf(request)
    const hit = this.over.get(address)
    if (!hit) return null
    const now = this.now()
    if (hit.resetAt <= now) {
      this.over.delete(address)
      return null
    }
    return tooMany(hit, now, this.limit)
  }

  /** Counts a refused credential from `client`; answers the 429 to send instead of the 401 once past the limit. */
  async failed(request: Request, client: string): Promise<Refused | null> {
    if (this.limit === 0 || !request.headers.has('authorization')) return null
    const now = this.now()
    const hit = await this.coordination.rateHit(`rate:auth-failures:${client}`, this.limit, WINDOW_MS, now)
    if (hit.allowed) return null
    if (this.over.size >= MAX_REMEMBERED) this.over.delete(this.over.keys().next().value!)
    this.over.set(client, hit)
    return tooMany(hit, now, this.limit)
  }
}

function tooMany(hit: RateHit, now: number, limit: number): Refused {
  return rateLimited(hit, now, (retryAfter) => `too many failed authentications from this address (${limit} a minute); retry in ${retryAfter} s`)
}

/** A request's client address, as the server saw it ('unknown' once its socket is gone). */
export type ClientOf = (request: Request) => string

/** Refuses requests from an address past the limit before anything else runs (every route, every surface). */
export function authThrottleGate(throttle: AuthThrottle, clientOf: ClientOf) {
  return new Elysia({ name: 'auth-throttle' }).onRequest(({ request }) => {
    const refusal = throttle.refusal(request, clientOf)
    if (refusal) throw refusal
  })
}
