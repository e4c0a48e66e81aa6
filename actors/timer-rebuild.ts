/**
 * Rebuilding the durable timers from the actors' stored snapshots. The snapshots are the source of
 * truth for every wait (each stored document lists its deadlines); the timers in the coordination
 * store are only the index the pump claims from. A Redis that restarts empty (no persistence), is
 * flushed, or fails over to an empty replica loses that index; the actors waiting on it would
 * otherwise never wake.
 *
 * When: whenever the timers' mark is missing from the coordination store, looked for at start
 * (before the pump runs) and then every CHECK_MS. The mark lives beside the timers (on Redis in
 * the same hash slot), so whatever empties the one empties the other; while it is there the timers
 * are whole (every change since the last rebuild kept them so, deadlines.ts), so a start with the
 * mark in place costs one read, not a scan of every waiting actor. A rebuild
 * sets the mark for REBUILD_CLAIM_MS, restores every stored deadline's timer (adding missing ones,
 * never disturbing one being delivered), then makes the mark permanent, which fails if the store
 * emptied again meanwhile (then the next check rebuilds again). Several instances rebuilding at
 * once do the same idempotent work; extra timers are harmless (deadlines.ts).
 */
import type { Coordination, TimerSpec } from '../src/coordination/port'
import { randomId } from '../src/ids'
import type { Logger } from '../src/logger'
import { type TimerPayload, timerId } from './deadlines'
import type { SnapshotStore } from './snapshot-store'

// The mark is looked for once a second, as often as the pump polls (timer-pump.ts DEFAULT_POLL_MS):
// a timer lost with the store is then at most about a second later than the poll would have been.
export const CHECK_MS = 1_000
// A rebuild reads every actor with a deadline a page at a time; a page of 500 is one indexed read
// and one restore call (1,500 arguments on Redis), small enough to keep each step short.
const PAGE = 500
// How long a rebuild's mark holds before it lapses (its instance died mid-rebuild). Measured on a
// loaded 2-core host: 100,000 waiting actors rebuilt in 2.6 s into the local store and 7.9 s into
// Redis (empty), 1.9 s and 3.6 s with every timer already there; a rebuild that outlasts the mark
// only lets another instance start a second, which repeats idempotent work.
export const REBUILD_CLAIM_MS = 60_000

export class TimerRebuild {
  private running: Promise<number> | null = null

  constructor(
    private readonly deps: {
      coordination: Coordination
      snapshots: () => SnapshotStore
      logger: Logger
      /** A timer due at this instant was restored (the pump wakes for it). */
      restored: (dueAt: number) => void
    },
  ) {}

  /** Restores every stored deadline's timer; answers how many were missing (or late). One at a time. */
  rebuild(): Promise<number> {
    this.running ??= this.run().finally(() => {
      this.running = null
    })
    return this.running
  }

  /** Rebuilds when the coordination store has lost the timers' mark (its data), or never had it (`atStart`: a first start). */
  async check(atStart = false): Promise<void> {
    if (this.running || (await this.deps.coordination.timersMarked())) return
    const { logger } = this.deps
    if (atStart) logger.info('durable timers: no mark that they are whole (a first start, or the coordination store lost its data); rebuilding from the stored actors')
    else logger.warn('durable timers: the coordination store lost them (restarted empty or flushed); rebuilding from the stored actors')
    await this.rebuild()
  }

  private async run(): Promise<number> {
    const { coordination, logger } = this.deps
    const token = randomId()
    await coordination.beginTimerRebuild(token, REBUILD_CLAIM_MS)
    let restored = 0
    let actors = 0
    let after: string | null = null
    for (;;) {
      const page = await this.deps.snapshots().withDeadlines(after, PAGE)
      if (page.length === 0) break
      after = page[page.length - 1].id
      const timers: TimerSpec[] = []
      for (const doc of page) {
        if (doc.status !== 'active') continue
        for (const d of doc.deadlines) {
          const payload: TimerPayload = { kind: doc.kind, id: doc.resourceId, name: d.name, at: d.at }
          timers.push({ id: timerId(doc.kind, doc.resourceId, d.name), dueAt: d.at, payload })
        }
      }
      actors += page.length
      const changed = await coordination.restoreTimers(timers)
      restored += changed
      if (changed > 0) this.deps.restored(timers.reduce((min, t) => Math.min(min, t.dueAt), Number.POSITIVE_INFINITY))
      if (page.length < PAGE) break
    }
    const ended = await coordination.endTimerRebuild(token)
    if (restored > 0 || !ended) logger.warn({ restored, actors, ended }, 'durable timers rebuilt from the stored actors')
    else logger.debug({ actors }, 'durable timers checked against the stored actors: none missing')
    return restored
  }
}
