/**
 * The runtime's periodic chores, as the housekeeper runs them (housekeeper.ts): passivating idle
 * actors (handing them over instead while draining), renewing leases, resuming orphaned work, and
 * checking that the durable timers survived a coordination store that came back empty.
 */
import { DRAIN_SWEEP_MS, type Handover, ORPHAN_SWEEP_MS } from './handover'
import type { Chore } from './housekeeper'
import type { ActorLeases } from './leases'
import type { Residency } from './residency'
import { CHECK_MS as TIMER_CHECK_MS, type TimerRebuild } from './timer-rebuild'

export interface ChoreParts {
  handover: Handover
  leases: ActorLeases
  timerRebuild: TimerRebuild
  /** The residency of a started runtime (throws before start). */
  residency: () => Residency
  /** The gap between two passivation scans for the kinds registered (passivation.ts). */
  sweepMs: () => number
  passivateIdle: () => Promise<number>
}

export function runtimeChores(p: ChoreParts): Chore[] {
  const { handover } = p
  return [
    { name: 'passivation', everyMs: () => (handover.draining ? DRAIN_SWEEP_MS : p.sweepMs()), run: () => (handover.draining ? handover.handOverIdle() : p.passivateIdle()) },
    // A third of the ttl: two renewals in a row may be late before the lease lapses.
    { name: 'lease renewal', everyMs: () => p.leases.ttlMs / 3, run: () => p.residency().renewLeases() },
    { name: 'orphaned work', everyMs: () => ORPHAN_SWEEP_MS, run: () => handover.resumePending() },
    // The coordination store may come back empty (timer-rebuild.ts): its timers are rebuilt then.
    { name: 'durable timer check', everyMs: () => TIMER_CHECK_MS, run: () => p.timerRebuild.check() },
  ]
}
