/**
 * How far ahead of the line the process's calls keep their agent audio (playout.ts sends LEAD_MS
 * ahead). Paced sends that find the lead shrunk mean the process is late for its calls; at zero
 * the caller hears a gap. One watch per process, as the event loop all the calls share is one.
 */

/** The lowest lead is remembered per window, and two windows kept: "lately" is 2–4 s. */
const WINDOW_MS = 2_000

class LeadWatch {
  private current: { start: number; lowest: number } | null = null
  private previous: { start: number; lowest: number } | null = null

  /** A paced send found `leadMs` of audio still buffered at the line. */
  note(leadMs: number, now: number = performance.now()): void {
    this.roll(now)
    if (!this.current) this.current = { start: now, lowest: leadMs }
    else this.current.lowest = Math.min(this.current.lowest, leadMs)
  }

  /** The lowest lead seen in the last 2–4 s; null when no call sent audio then. */
  lowest(now: number = performance.now()): number | null {
    this.roll(now)
    const all = [this.current, this.previous].filter((w) => w !== null).map((w) => w.lowest)
    return all.length ? Math.min(...all) : null
  }

  private roll(now: number): void {
    if (this.current && now - this.current.start >= WINDOW_MS) {
      this.previous = now - this.current.start < 2 * WINDOW_MS ? this.current : null
      this.current = null
    }
    if (this.previous && now - this.previous.start >= 2 * WINDOW_MS) this.previous = null
  }
}

export const playoutLead = new LeadWatch()
