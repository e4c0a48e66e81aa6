/**
 * The runtime's two periodic chores: passivating idle actors and renewing the leases of the
 * actors held in memory. Each chore runs at most once at a time; a slow round delays the next.
 */
import type { Logger } from '../src/logger'

export interface Chore {
  name: string
  /** Read before each round, so it may follow configuration that changes after construction. */
  everyMs: () => number
  run: () => Promise<unknown>
}

export class Housekeeper {
  private readonly timers: ReturnType<typeof setTimeout>[] = []
  private readonly running = new Set<Promise<unknown>>()
  private stopped = true

  constructor(
    private readonly chores: Chore[],
    private readonly logger: Logger,
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
    for (const t of this.timers) clearTimeout(t)
    await Promise.allSettled([...this.running])
  }

  private plan(chore: Chore, slot: number): void {
    if (this.stopped) return
    this.timers[slot] = setTimeout(async () => {
      const round = chore.run().catch((err: unknown) => this.logger.error({ err }, `actor runtime: ${chore.name} failed`))
      this.running.add(round)
      await round
      this.running.delete(round)
      this.plan(chore, slot)
    }, chore.everyMs())
  }
}
