/**
 * How fast the sandbox callee's audio goes. A call that runs on its caller's audio (`pace` given,
 * and answering) goes at the agent's pace: the callee sends no more than AHEAD_MS past what the
 * agent's side has judged, and nothing while it makes its answer (up to MAX_HOLD_MS of real time),
 * so a host that falls behind slows the call down rather than changing what is heard, and one with
 * time to spare runs it faster than real time. Any other call goes in real time.
 */
import { FRAME_MS } from './callee-stream'

/**
 * How far past the agent's judged audio the callee may run when the call runs on its audio: ten
 * frames, well inside the second of agent audio the playout keeps buffered here (LEAD_MS), so the
 * agent's answer never runs dry at the callee for want of its caller's frames.
 */
const AHEAD_MS = 200
/** A call slowed to its agent's pace ends at its bound of audio, or at this many times that in real time (a host several times too slow). */
const SLOWED_BOUND = 4
/**
 * The longest the callee waits, in real time, for the agent's side to make its answer before its
 * audio goes on anyway: a local model and the sandbox voice take well under a second even on a
 * loaded host; past this something is stuck, and the call's own waits must run to end it.
 */
const MAX_HOLD_MS = 15_000

/** How far the agent's side has judged the call's stream (ms), and whether it is making what comes next; null when the call does not run on its audio. */
export type Pace = () => { judged: number; hold: boolean } | null

export class CalleePace {
  /** Since when (performance.now()) the agent's side has asked the callee to wait. */
  private holdingSince: number | null = null

  constructor(private readonly pace: Pace | undefined) {}

  /**
   * The call runs on its caller's audio: then the STT double follows each line by its place in
   * the stream. On any other call it keeps following the host's time, which real-time
   * turn-taking was tuned against: there the words a pause is judged by run a little ahead of the
   * audio the VAD has judged, as a streaming engine's partials do.
   */
  paced(): boolean {
    return (this.pace?.() ?? null) !== null
  }

  /** How many frames should have been sent by `now` (performance.now()), `sent` of them sent since `started`. */
  due(now: number, started: number, sent: number): number {
    const pace = this.pace?.() ?? null
    if (!pace) return Math.floor((now - started) / FRAME_MS)
    if (!pace.hold) this.holdingSince = null
    else this.holdingSince ??= now
    const held = this.holdingSince !== null && now - this.holdingSince < MAX_HOLD_MS
    return held ? sent : Math.floor((pace.judged + AHEAD_MS) / FRAME_MS)
  }

  /**
   * Past the hang-up bound: `afterMs` of real time since the answer; of the call's own audio
   * (`streamMs`) when it runs on it (a host that falls behind slows such a call down), with a
   * real-time bound SLOWED_BOUND times as long so a call whose agent side stopped judging still ends.
   */
  pastBound(sinceAnswerMs: number, streamMs: number, afterMs: number): boolean {
    return this.paced() ? streamMs >= afterMs || sinceAnswerMs >= afterMs * SLOWED_BOUND : sinceAnswerMs >= afterMs
  }
}
