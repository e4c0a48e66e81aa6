/**
 * The agent's own audio as the line plays it, kept as a level every 20 ms by when it plays (the
 * playout's schedule), so that what comes back from the caller can be compared with it: on a
 * speakerphone or a poor handset the agent's voice leaks back into the caller's audio, delayed and
 * much quieter (echo). The session tells it what the playout sent and when that plays; it takes
 * the interruption signal as the stage on the line's side of the playout, cut where a stop or an
 * end drops the line's audio, and is cut too when a pause's sentence has played out.
 */

import type { Interruptible, Interruption } from '../interrupt-signal'

/** Levels are kept per 20 ms of audio (a line frame). */
const FRAME_MS = 20
/**
 * How much of the schedule is kept: the playout runs up to LEAD_MS (1 s) ahead of the line, the
 * VAD may judge audio up to MAX_INBOUND_PENDING (2 s) after it arrived, and the onset rules look
 * back ECHO_LOOKBACK_MS (0.5 s) from its arrival: 5 s is all three with room. Kept shorter, a VAD
 * running behind on a loaded host found no agent audio for what it judged and took the echo for
 * the caller.
 */
const KEPT_MS = 5_000
/** The level of no audio at all. */
export const SILENT_DB = -120

export class AgentEcho implements Interruptible {
  /** `now`: the call's clock, where a signal's cut falls. */
  constructor(private readonly now: () => number) {}

  /** A stop or an end drops the line's audio now: the schedule after it never plays. */
  interrupted(signal: Interruption): void {
    if (signal.kind === 'stop' || signal.kind === 'end') this.cut(this.now())
  }

  /** Each 20 ms of the agent's audio: when it starts playing (ms, the session's clock) and its level (dBFS), oldest first. */
  private readonly frames: { at: number; db: number }[] = []

  /** Agent audio (any rate) that starts playing at `at`. */
  played(pcm: Int16Array, rate: number, at: number): void {
    const step = Math.max(1, Math.round((FRAME_MS * rate) / 1000))
    for (let from = 0; from < pcm.length; from += step) {
      const to = Math.min(pcm.length, from + step)
      let sum = 0
      for (let i = from; i < to; i++) sum += pcm[i]! * pcm[i]!
      const rms = Math.sqrt(sum / (to - from)) / 32768
      this.frames.push({ at: at + (from * 1000) / rate, db: rms > 0 ? 20 * Math.log10(rms) : SILENT_DB })
    }
    const keepFrom = at - KEPT_MS
    let drop = 0
    while (drop < this.frames.length && this.frames[drop]!.at < keepFrom) drop++
    if (drop) this.frames.splice(0, drop)
  }

  /** The line dropped what it had not played (`clear` at `at`): audio scheduled from then on never played. */
  cut(at: number): void {
    while (this.frames.length && this.frames.at(-1)!.at >= at) this.frames.pop()
  }

  /** The loudest 20 ms of agent audio playing at any moment from `from` to `to` (dBFS); SILENT_DB when none played then. */
  loudest(from: number, to: number): number {
    let db = SILENT_DB
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i]!
      if (f.at + FRAME_MS <= from) break
      if (f.at <= to && f.db > db) db = f.db
    }
    return db
  }
}
