/**
 * The timer pump: claims due durable timers from the coordination store, hands each to the
 * runtime for delivery, and acks it only after the delivery (and the resulting persist) is done.
 * A crash between claim and ack leaves the claim to lapse; the timer is then offered again.
 * That is at-least-once delivery; the machine's `timer.due` guard makes the effect happen once.
 *
 * With the system clock it polls, and also wakes early for the next due timer (from
 * `nextTimerDueAt`, and from `nudge` when the runtime schedules one). With the manual clock, time
 * only moves on an explicit advance, whose handler calls `runDue(now)`.
 */
import type { Clock } from '../src/clock'
import type { ClaimedTimer, Coordination } from '../src/coordination/port'
import type { Logger } from '../src/logger'

/** `ack`: delivered (or undeliverable for good), remove it. `keep`: leave the claim to lapse and retry. */
export type DeliveryOutcome = 'ack' | 'keep'

export interface TimerPumpOptions {
  coordination: Coordination
  clock: Clock
  logger: Logger
  deliver: (timer: ClaimedTimer, now: number) => Promise<DeliveryOutcome>
  pollMs?: number
  claimLeaseMs?: number
  batch?: number
  /** Runs between a successful delivery and its ack (tests use it to crash exactly there). */
  beforeAck?: (timer: ClaimedTimer) => Promise<void>
}

// Durable timers carry waits of seconds to days (retries, scheduled calls, 30-day erasure): a
// second of lateness is invisible there, and an idle poll costs one indexed query. Timers due
// sooner than the next poll are caught by the early wake-up, not by polling faster.
export const DEFAULT_POLL_MS = 1_000
// A delivery is one store write plus a few timer writes (milliseconds), so a live pump never
// outlives its claim; a crashed instance's claimed timers come back within half a minute.
export const DEFAULT_CLAIM_LEASE_MS = 30_000
// One claim is one SQL statement or Lua call; 256 keeps a batch's memory small and bounds what a
// crash mid-batch leaves to lapse to well under a second of deliveries.
export const DEFAULT_BATCH = 256
// A machine that keeps re-arming an already-due deadline would make a drain endless; 10,000
// rounds of 256 (2.5 M deliveries) is far beyond any real backlog, so hitting it means a bug.
const MAX_ROUNDS_PER_DRAIN = 10_000
// When a poll found nothing to claim although something looked due (another instance holds the
// claim), look again after this short pause instead of spinning.
const IDLE_RETRY_MS = 50

export class TimerPump {
  private readonly pollMs: number
  private readonly claimLeaseMs: number
  private readonly batch: number
  private started = false
  private ticking = false
  private wakeTimer: ReturnType<typeof setTimeout> | null = null
  private wakeAt = Number.POSITIVE_INFINITY
  private readonly inflight = new Set<Promise<number>>()

  constructor(private readonly opts: TimerPumpOptions) {
    this.pollMs = opts.pollMs ?? DEFAULT_POLL_MS
    this.claimLeaseMs = opts.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS
    this.batch = opts.batch ?? DEFAULT_BATCH
  }

  start(): void {
    if (this.started) return
    this.started = true
    this.wake(0)
  }

  async stop(): Promise<void> {
    this.started = false
    if (this.wakeTimer) clearTimeout(this.wakeTimer)
    this.wakeTimer = null
    this.wakeAt = Number.POSITIVE_INFINITY
    await Promise.allSettled([...this.inflight])
  }

  /** A timer due at `dueAt` (service clock) was scheduled: wake for it if that is sooner. */
  nudge(dueAt: number): void {
    if (!this.started || this.opts.clock.kind !== 'system') return
    this.wake(Math.max(0, dueAt - this.opts.clock.now()))
  }

  /**
   * Delivers every timer due at `now` (default: the clock's now), including ones that fall due
   * because of these deliveries and ones a background poll is delivering right now, and resolves
   * when all of them have been delivered. Returns how many were delivered while it ran, counting
   * the background poll's: a deadline set by a delivery wakes that poll at once, and whichever
   * drain claims the timer first delivers it.
   */
  async runDue(now: number = this.opts.clock.now()): Promise<number> {
    let total = 0
    for (;;) {
      for (const r of await Promise.allSettled([...this.inflight])) if (r.status === 'fulfilled') total += r.value
      total += await this.track(this.drain(now))
      if (this.inflight.size === 0) return total
    }
  }

  private wake(delayMs: number): void {
    const at = Date.now() + delayMs
    if (this.wakeTimer && at >= this.wakeAt) return
    if (this.wakeTimer) clearTimeout(this.wakeTimer)
    this.wakeAt = at
    // A host timer, not the clock's: the pump polls the store in host time on either clock (lapsed claims come back without an advance).
    this.wakeTimer = setTimeout(() => void this.tick(), delayMs)
  }

  private async tick(): Promise<void> {
    this.wakeTimer = null
    this.wakeAt = Number.POSITIVE_INFINITY
    // A tick in progress schedules the next wake-up when it ends, covering this one.
    if (!this.started || this.ticking) return
    this.ticking = true
    let delay = this.pollMs
    try {
      const delivered = await this.track(this.drain(this.opts.clock.now()))
      if (this.opts.clock.kind === 'system') {
        const next = await this.opts.coordination.nextTimerDueAt()
        if (next !== null) delay = Math.min(delay, Math.max(delivered === 0 ? IDLE_RETRY_MS : 0, next - this.opts.clock.now()))
      }
    } catch (err) {
      this.opts.logger.error({ err }, 'timer pump: poll failed')
    } finally {
      this.ticking = false
    }
    if (this.started) this.wake(delay)
  }

  private track(work: Promise<number>): Promise<number> {
    this.inflight.add(work)
    const untrack = () => this.inflight.delete(work)
    work.then(untrack, untrack)
    return work
  }

  private async drain(now: number): Promise<number> {
    let delivered = 0
    for (let round = 0; round < MAX_ROUNDS_PER_DRAIN; round++) {
      const claimed = await this.opts.coordination.claimDueTimers(now, this.batch, this.claimLeaseMs)
      if (claimed.length === 0) return delivered
      // Delivered concurrently: each goes through its actor's serial queue, and timers of one
      // actor keep their due order because send() queues synchronously in call order.
      const done = await Promise.all(claimed.map((t) => this.deliverOne(t, now)))
      delivered += done.filter(Boolean).length
    }
    this.opts.logger.warn({ now }, 'timer pump: drain stopped after its round limit; a deadline keeps re-arming in the past')
    return delivered
  }

  private async deliverOne(timer: ClaimedTimer, now: number): Promise<boolean> {
    try {
      if ((await this.opts.deliver(timer, now)) !== 'ack') return false
      if (this.opts.beforeAck) await this.opts.beforeAck(timer)
      await this.opts.coordination.ackTimer(timer.id, timer.claim)
      return true
    } catch (err) {
      // Not acked: the claim lapses after claimLeaseMs and the timer is offered again.
      this.opts.logger.error({ err, timer: timer.id }, 'timer pump: delivery failed; will retry after the claim lapses')
      return false
    }
  }
}
