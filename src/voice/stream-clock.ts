/**
 * The caller's audio as a call's clock: a simulated call on the manual service clock runs its
 * voice session on this instead of the host's timers, so what the agent hears does not depend on
 * how fast the host is.
 *
 * `now()` is the stream position (ms) of the newest frame from the line (the line's own stamp,
 * not when it arrived), so every instant the session records is a place in the caller's audio.
 * A wait (the chart's end-of-turn wait, the playout's pacing) falls due only once the VAD has
 * judged the audio up to it: a host too busy to keep up delays the wait with the audio, where a
 * timer of the host would fire while the caller's next words still wait to be judged and end the
 * turn inside a line.
 *
 * The line keeps sending frames (silence between lines), so time runs as long as the call does.
 * It schedules in the clock port's shape (`after`); the chart and the playout take it through
 * `actorTimers`. It is no whole `Clock`: a call's audio has no `every` and no epoch time.
 */
import type { Cancel } from '../clock'

export class StreamClock {
  private heardMs = 0
  private judgedMs = 0
  private seq = 0
  /** The instant the wait running now fell due; null outside a wait. */
  private firing: number | null = null
  private readonly waits = new Map<number, { due: number; fn: () => void }>()

  now(): number {
    return this.heardMs
  }

  /**
   * Inside a wait: the place in the stream it fell due, which two runs of one call agree on (the
   * newest frame, `now()`, can be up to the caller's lead past it). Outside one: `now()`.
   */
  dueNow(): number {
    return this.firing ?? this.heardMs
  }

  /** How far the VAD has judged the stream (ms): the caller's side keeps its audio within reach of this. */
  get judgedUpTo(): number {
    return this.judgedMs
  }

  /** Runs `fn` once the judged audio reaches `ms` past the newest frame (the clock port's `after`); the result cancels it. */
  after(ms: number, fn: () => void): Cancel {
    const id = ++this.seq
    this.waits.set(id, { due: this.heardMs + Math.max(0, Number.isFinite(ms) ? ms : 0), fn })
    return () => void this.waits.delete(id)
  }

  /** A frame of `ms` came from the line, stamped `timestamp` (its end in the stream; 0 or absent: unstamped, counted on). */
  heard(ms: number, timestamp?: number): void {
    this.heardMs = timestamp && timestamp > 0 ? Math.max(this.heardMs, timestamp) : this.heardMs + ms
  }

  /**
   * The VAD has judged the audio up to `at` (a `now()` of when it was heard): the waits due by
   * then run, earliest first (ties in the order they were set). Waits set while these run and
   * already due run too, a bounded number of rounds (a wait that keeps setting a zero wait must
   * not hold the loop).
   */
  judged(at: number): void {
    if (at > this.judgedMs) this.judgedMs = at
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const due = [...this.waits].filter(([, w]) => w.due <= this.judgedMs).sort(([a, x], [b, y]) => x.due - y.due || a - b)
      if (!due.length) return
      for (const [id, w] of due) {
        if (!this.waits.delete(id)) continue
        this.firing = w.due
        try {
          w.fn()
        } finally {
          this.firing = null
        }
      }
    }
  }
}

/** Rounds of waits set by waits in one `judged`: the chart and the playout chain a few at most; the rest run at the next frame. */
const MAX_ROUNDS = 16
