/**
 * Time is a port: the system clock, or a manual clock that only moves when told (console
 * `POST /console/clock/advance`), so tests can cross 24 hours or 30 days in one request.
 */
export interface Clock {
  readonly kind: 'system' | 'manual'
  /** Epoch milliseconds. */
  now(): number
}

export const systemClock: Clock = { kind: 'system', now: () => Date.now() }

export class ManualClock implements Clock {
  readonly kind = 'manual' as const
  constructor(private current: number) {}
  now(): number {
    return this.current
  }
  /** Moves time forward; never backward. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('ms must be a non-negative number')
    this.current += Math.floor(ms)
    return this.current
  }
}

/** ISO 8601 UTC with milliseconds: the one timestamp form the stores keep (see store/port.ts). */
export const iso = (ms: number): string => new Date(ms).toISOString()
