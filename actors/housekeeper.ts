/**
 * The runtime's two periodic chores: passivating idle actors and renewing the leases of the
 * actors held in memory. Each chore runs at most once at a time; a slow round delays the next.
 */
import { type Cancel, type Clock, systemClock } from '../src/clock'
import type { Logger } from '../src/logger'

export interface Chore {
  name: string
  /** Read before each round, so it may follow configuration that changes after construction. */
  everyMs: () => number
  run: () => Promise<unknown>
}

export class Housekeeper {
  private readonly rounds: Cancel[] = []
  private readonly running = new Set<Promise<unknown>>()
  private stopped = true

  constructor(
    private readonly chores: Chore[],
    private readonly logger: Logger,
    /** Host time: the leases and idle times the chores keep are wall time in the coordination store. */
    private readonly clock: Pick<Clock, 'after'> = systemClock,
  ) {}

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.chores.forEach((chore, i) => {
      this.plan(chore, i)
    })
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const cancel of this.rounds) cancel()
    await Promise.allSettled([...this.running])
  }

  private plan(chore: Chore, slot: number): void {
    if (this.stopped) return
    this.rounds[slot] = this.clock.after(chore.everyMs(), async () => {
      const round = chore.run().catch((err: unknown) => this.logger.error({ err }, `actor runtime: ${chore.name} failed`))
      this.running.add(round)
      await round
      this.running.delete(round)
      this.plan(chore, slot)
    })
  }
}
