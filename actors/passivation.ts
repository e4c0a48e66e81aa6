/**
 * When an actor counts as idle and how often the runtime looks for idle ones; passivating one
 * stops it and forgets it (residency.ts), so nothing of it stays in memory until its next event.
 */
import type { Registration } from './types'

// An idle actor costs memory and one read (~tens of µs) to bring back. Events of a live
// conversation arrive seconds apart; a minute of silence means it is unlikely to be needed soon.
export const DEFAULT_IDLE_MS = 60_000
// Idle actors are found by scanning the live map: every 5 s keeps the overshoot past the default
// idleMs under 10% while a scan of 10,000 entries costs well under a millisecond. Kinds with a
// shorter idleMs get scans at half their idleMs, but not more often than every 100 ms, which
// keeps even a 10,000-actor scan under 1% of a core.
const SWEEP_MS = 5_000
const MIN_SWEEP_MS = 100

/** The gap between two scans for idle actors, for the kinds registered. */
export function sweepMs(kinds: Iterable<Registration>): number {
  const idle = [...kinds].map((r) => r.idleMs).filter((ms) => ms > 0)
  return Math.max(MIN_SWEEP_MS, Math.min(SWEEP_MS, ...idle.map((ms) => ms / 2)))
}

/** Whether an actor last active at `lastActiveAt` has been idle for its kind's idleMs at `now`. */
export function isIdle(reg: Registration, lastActiveAt: number, now: number): boolean {
  return now - lastActiveAt >= reg.idleMs
}
