/**
 * The instance is shutting down (SIGTERM): once begun, `/health` answers 503 `draining`, new work
 * is refused (app.ts), and live work may finish until the deadline (DRAIN_SECONDS after the
 * signal). A second signal cuts the deadline short. Features wait on it in their `drain` hook.
 */

/** How often a wait re-checks whether the work it waits for is done. */
const CHECK_MS = 100

export class Draining {
  private startedAt: number | null = null
  private deadlineAt = Number.POSITIVE_INFINITY
  private readonly cut = new Set<() => void>()

  get active(): boolean {
    return this.startedAt !== null
  }

  /** When live work is ended (epoch ms, wall clock); Infinity before the drain begins. */
  get deadline(): number {
    return this.deadlineAt
  }

  begin(seconds: number, now = Date.now()): void {
    if (this.startedAt !== null) return
    this.startedAt = now
    this.deadlineAt = now + seconds * 1000
  }

  /** The deadline is now (a second signal): whatever waits for it stops waiting. */
  cutShort(now = Date.now()): void {
    this.deadlineAt = Math.min(this.deadlineAt, now)
    for (const wake of this.cut) wake()
  }

  /**
   * Resolves true once `done()` holds, or false at `until` (default: the deadline, which a second
   * signal brings forward).
   */
  async waitFor(done: () => boolean, until?: number): Promise<boolean> {
    let wake = () => {}
    const cut = new Promise<void>((resolve) => (wake = resolve))
    if (until === undefined) this.cut.add(wake)
    try {
      for (;;) {
        if (done()) return true
        const left = (until ?? this.deadlineAt) - Date.now()
        if (left <= 0) return false
        await Promise.race([Bun.sleep(Math.min(CHECK_MS, left)), cut])
      }
    } finally {
      this.cut.delete(wake)
    }
  }
}
