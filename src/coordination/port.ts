/**
 * The coordination port: short-lived shared state between service instances. The in-process
 * adapter serves one machine (its durable parts in a SQLite file in DATA_DIR); the Redis adapter
 * serves many. One contract suite (test/coordination/contract.ts) runs against both.
 *
 * Instants are epoch milliseconds from the service clock (which may be the manual clock), passed
 * in by the caller, so tests can drive time.
 */

export interface StoredResponse {
  status: number
  body: unknown
  headers?: Record<string, string>
}

export type IdempotencyBegin = { state: 'started' } | { state: 'in_flight' } | { state: 'done'; response: StoredResponse }

export interface RateHit {
  allowed: boolean
  limit: number
  count: number
  remaining: number
  /** When the current fixed window ends (epoch ms). */
  resetAt: number
}

export interface SlotHold {
  acquired: boolean
  /** Members holding a slot after this call (the capacity when refused). */
  held: number
}

export interface TimerSpec {
  /** Unique per timer; scheduling the same id again replaces it. */
  id: string
  dueAt: number
  payload: unknown
}

export interface ClaimedTimer extends TimerSpec {
  /** Pass back to ackTimer; a claim that is not acked is offered again after its lease. */
  claim: string
}

export interface Coordination {
  readonly kind: 'local' | 'redis'

  /**
   * Claims `key` for a request, held by `owner` (unique to the request; a fresh one when not
   * given). `ttlMs` bounds both the in-flight claim and the stored answer.
   */
  idempotencyBegin(key: string, ttlMs: number, owner?: string): Promise<IdempotencyBegin>
  idempotencyComplete(key: string, response: StoredResponse, ttlMs: number): Promise<void>
  /**
   * Forgets `owner`'s in-flight claim of `key`, so the same key may be used again (after a
   * server-side failure); a stored answer, or another owner's claim, stays. On Redis a release
   * that cannot reach it now fails as unavailable but is kept, and sent until Redis answers
   * (claim-releases.ts).
   */
  idempotencyRelease(key: string, owner: string): Promise<void>

  /** Counts one hit in the fixed window of `windowMs` that contains `now`. */
  rateHit(key: string, limit: number, windowMs: number, now: number): Promise<RateHit>

  /** Takes or renews (same owner) a lease; false when another owner holds it. */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>
  releaseLease(name: string, owner: string): Promise<void>
  leaseOwner(name: string): Promise<string | null>

  /**
   * A counting semaphore (call lines): holds `member` in `set` while fewer than `capacity` members
   * hold it. Holding again renews the member's expiry and never counts it twice. A member not
   * released lapses after `ttlMs` of wall time, so a crashed holder frees its slot by itself.
   */
  acquireSlot(set: string, member: string, capacity: number, ttlMs: number): Promise<SlotHold>
  releaseSlot(set: string, member: string): Promise<void>
  /** Members holding a slot now. */
  slotsHeld(set: string): Promise<number>

  publish(channel: string, message: string): Promise<void>
  /** Resolves once the subscription is live; the returned function unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>

  /** Durable timers: survive a restart of the process (and, on Redis, of any instance). */
  scheduleTimer(timer: TimerSpec): Promise<void>
  cancelTimer(id: string): Promise<boolean>
  /**
   * Hands out up to `limit` timers due at or before `now` (service clock), oldest first. Each
   * claimed timer is hidden for `leaseMs` of real (wall) time and offered again if not acked by
   * then, so a crash between claim and ack loses nothing even under a stopped manual clock
   * (at-least-once: handlers must be idempotent).
   */
  claimDueTimers(now: number, limit: number, leaseMs: number): Promise<ClaimedTimer[]>
  /** Removes a claimed timer; a no-op if it was rescheduled since the claim. */
  ackTimer(id: string, claim: string): Promise<void>
  /**
   * Rebuilding timers from their source of truth (the actors' stored deadlines): schedules each
   * timer no timer with its id stands for yet, and moves an unclaimed one that is due later to
   * the earlier instant; a claimed one is left to its claimer. Answers how many it added or moved.
   */
  restoreTimers(timers: TimerSpec[]): Promise<number>
  /**
   * The mark that the timers are whole. A rebuild begins by setting it to its `token` for
   * `ttlMs` (so a rebuilder that dies lets the mark lapse and another rebuilds), and ends by
   * making it permanent, which succeeds only while the mark is still its own: a store that lost
   * its data mid-rebuild (restarted empty again) fails the end and is rebuilt once more.
   */
  beginTimerRebuild(token: string, ttlMs: number): Promise<void>
  endTimerRebuild(token: string): Promise<boolean>
  /** False once the store lost the mark, i.e. its data (restarted empty, flushed, failed over to an empty replica). */
  timersMarked(): Promise<boolean>
  nextTimerDueAt(): Promise<number | null>
  pendingTimers(): Promise<number>
  /** Timers due at or before `now` (service clock) and not yet acked, claimed ones included: the backlog. */
  timersDue(now: number): Promise<number>

  /**
   * Resolves once coordination answers a round trip (readiness); on Redis, fails within
   * COMMAND_TIMEOUT_MS (unavailable.ts) with CoordinationUnavailable when it is down or stalled.
   */
  ping(): Promise<void>

  close(): Promise<void>
}
