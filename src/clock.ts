/**
 * Time is a port: the system clock, or a manual clock that only moves when told (console
 * `POST /console/clock/advance`), so tests can cross 24 hours or 30 days in one request. The port
 * also schedules: work set with `after` or `every` runs on the clock's time, the host's timers on
 * the system clock and inside `advance` on the manual one, so a test steps through a wait instead
 * of sleeping through it.
 */
export interface Clock {
  readonly kind: 'system' | 'manual'
  /** Epoch milliseconds. */
  now(): number
  /** Runs `fn` once, `ms` from now; the result cancels it (a no-op once it has run). */
  after(ms: number, fn: () => void): Cancel
  /** Runs `fn` every `ms` from now on; the result stops it. */
  every(ms: number, fn: () => void): Cancel
}

export type Cancel = () => void

export const systemClock: Clock = {
  kind: 'system',
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms)
    return () => clearTimeout(timer)
  },
  every(ms, fn) {
    const timer = setInterval(fn, ms)
    // A beat repeats for as long as what it serves lives: that, not the beat, keeps the process up.
    timer.unref?.()
    return () => clearInterval(timer)
  },
}

export class ManualClock implements Clock {
  readonly kind = 'manual' as const
  private seq = 0
  private readonly waits = new Map<number, { due: number; fn: () => void }>()
  constructor(private current: number) {}
  now(): number {
    return this.current
  }
  after(ms: number, fn: () => void): Cancel {
    const id = ++this.seq
    this.waits.set(id, { due: this.current + Math.max(0, Number.isFinite(ms) ? Math.floor(ms) : 0), fn })
    return () => void this.waits.delete(id)
  }
  every(ms: number, fn: () => void): Cancel {
    if (!Number.isFinite(ms) || ms < 1) throw new RangeError('ms must be at least 1')
    let cancel: Cancel = () => {}
    const arm = () => {
      cancel = this.after(ms, () => {
        arm()
        fn()
      })
    }
    arm()
    return () => cancel()
  }
  /**
   * Moves time forward; never backward. The work falling due on the way runs in order of its due
   * instant (ties in the order it was set), each with `now()` at that instant, work it sets included.
   */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('ms must be a non-negative number')
    const target = this.current + Math.floor(ms)
    for (;;) {
      let next: [number, { due: number; fn: () => void }] | null = null
      for (const entry of this.waits) if (entry[1].due <= target && (!next || entry[1].due < next[1].due)) next = entry
      if (!next) break
      this.waits.delete(next[0])
      this.current = Math.max(this.current, next[1].due)
      next[1].fn()
    }
    this.current = target
    return this.current
  }
}

/**
 * The clock for waits that measure the host and its lines (a socket gone quiet, a live call's
 * heartbeat): the service clock's time, on the host's timers when the service clock is manual,
 * since a carrier and a process do not pause when the service's time does (and stepping it a day
 * must not time out every live line).
 */
export function hostPaced(clock: Clock): Clock {
  if (clock.kind === 'system') return clock
  return { kind: clock.kind, now: () => clock.now(), after: systemClock.after, every: systemClock.every }
}

/** A clock's scheduling in the shape XState's actors take as their `clock` (its SimulatedClock is one). */
export interface ActorTimers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(id: unknown): void
}

/** The clock's scheduling for an XState actor, or any part that takes timers in that shape. */
export function actorTimers(clock: Pick<Clock, 'after'>): ActorTimers {
  return {
    setTimeout: (fn, ms) => clock.after(ms, fn),
    // cast: the id is what setTimeout above returned, the wait's cancel.
    clearTimeout: (id) => (id as Cancel)(),
  }
}

/** ISO 8601 UTC with milliseconds: the one timestamp form the stores keep (see store/port.ts). */
export const iso = (ms: number): string => new Date(ms).toISOString()
