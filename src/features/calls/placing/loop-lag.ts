/**
 * The event loop's lag: a timer asked for every TICK_MS reports how late it fired, and the lag
 * "lately" is the median lateness over the last 2 s. Every call's audio is paced by timers on this
 * loop, so a loop late on most ticks is late for every call; one stall (a GC, a model load at
 * boot) is one late tick, which the calls' 1 s of buffered audio rides out and the median ignores.
 */

/** 20 ms: the media frame; finer would cost timer wake-ups for nothing. */
const TICK_MS = 20
const SPAN_MS = 2_000

export class LoopLag {
  private timer: ReturnType<typeof setTimeout> | null = null
  /** [when, how late] of the ticks in the last SPAN_MS. */
  private readonly ticks: [number, number][] = []

  start(): void {
    if (this.timer) return
    let expected = performance.now() + TICK_MS
    const tick = () => {
      const now = performance.now()
      this.ticks.push([now, Math.max(0, now - expected)])
      this.trim(now)
      expected = now + TICK_MS
      this.timer = setTimeout(tick, TICK_MS)
      this.timer.unref?.()
    }
    // Raw host timers, not the clock port: what is measured is how late the host's own timers fire.
    this.timer = setTimeout(tick, TICK_MS)
    this.timer.unref?.()
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  /** The median lateness of the last 2 s, ms (0 before any tick). */
  get ms(): number {
    this.trim(performance.now())
    if (!this.ticks.length) return 0
    const sorted = this.ticks.map(([, lag]) => lag).sort((a, b) => a - b)
    return Math.round(sorted[Math.floor(sorted.length / 2)]!)
  }

  private trim(now: number): void {
    while (this.ticks.length && now - this.ticks[0]![0] > SPAN_MS) this.ticks.shift()
  }
}
