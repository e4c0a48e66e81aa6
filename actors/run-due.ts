/**
 * Running the due durable timers on demand (a manual clock's advance): deliver every timer due at
 * `now`, wait until the actors they woke have settled (the effects those wake-ups started have run
 * and are stored), and repeat while that armed more timers already due — so "advance the manual
 * clock, then read" sees the outcome.
 */
import type { Logger } from '../src/logger'
import { actorKey } from './snapshot-store'

// runDue repeats while woken effects arm timers that are already due; a chain longer than this
// is a machine re-arming itself at "now", which must not hang a clock advance.
const MAX_RUN_DUE_PASSES = 20

export interface DueRunDeps {
  /** Delivers the timers due at `now`; answers how many. */
  deliverDue: (now?: number) => Promise<number>
  /** Waits until a woken actor has no effect in flight; null where it cannot (unknown kind, a timeout). */
  settle: (kind: string, id: string) => Promise<unknown>
  logger: Logger
}

export class DueRun {
  /** Actors woken by timers during a run, so it can wait for the effects they start. */
  private woken: Map<string, { kind: string; id: string }> | null = null

  constructor(private readonly deps: DueRunDeps) {}

  /** A timer reached this actor: a run in progress waits for it to settle. */
  woke(target: { kind: string; id: string }): void {
    this.woken?.set(actorKey(target.kind, target.id), target)
  }

  async run(now?: number): Promise<number> {
    let total = 0
    for (let pass = 0; pass < MAX_RUN_DUE_PASSES; pass++) {
      this.woken = new Map()
      const delivered = await this.deps.deliverDue(now)
      const woken = [...this.woken.values()]
      this.woken = null
      total += delivered
      await Promise.all(woken.map(({ kind, id }) => this.deps.settle(kind, id)))
      if (delivered === 0) return total
    }
    this.deps.logger.warn({ passes: MAX_RUN_DUE_PASSES }, 'runDue stopped: timers kept falling due')
    return total
  }
}
