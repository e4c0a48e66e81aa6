/**
 * The caller's speech as the VAD hears it, window by window: when a turn of speech starts, when
 * it pauses and when it goes on. When a pause ends the turn is not decided here: the turn-taking
 * chart (machines/voice-turn.ts) waits as long as the end-of-turn rules (end-of-turn.ts) say for
 * what was said, then ends it (`end()`).
 *
 * A turn starts after MIN_SPEECH_MS of speech (a click is not a turn) and pauses at the first
 * window without speech: the pause is the earliest moment the reply can start on what was heard
 * (preemptive generation); the wait that ends the turn counts from the last speech, not from here.
 */
/** Two Silero windows: one window of speech is usually a click or a breath. */
export const MIN_SPEECH_MS = 64

export type TurnEvent =
  /** A turn of speech began (after MIN_SPEECH_MS of it), or the caller went on after a pause. */
  | { type: 'speech_start'; at: number }
  /** The caller's speech stopped; `at` is when its last window ended (the end of the caller's speech). */
  | { type: 'pause'; at: number; speechMs: number }

export class TurnDetector {
  private speechMs = 0
  /** Speech since the last pause (a resumption needs MIN_SPEECH_MS too). */
  private burstMs = 0
  private inTurn = false
  private paused = false
  private lastSpeechAt = 0

  /** The caller is in a turn (speaking, or paused inside it). */
  get speaking(): boolean {
    return this.inTurn && !this.paused
  }

  get inTurnNow(): boolean {
    return this.inTurn
  }

  /** Speech came again after a pause, not yet MIN_SPEECH_MS of it: the caller may be going on, or it is a click. */
  get resuming(): boolean {
    return this.inTurn && this.paused && this.burstMs > 0
  }

  /** The caller's speech in this turn so far, ms (pauses inside it left out). */
  get spokenMs(): number {
    return this.speechMs
  }

  /** When the caller's last speech window ended. */
  get lastSpeech(): number {
    return this.lastSpeechAt
  }

  /** One analysis window ending at `at` (ms). */
  window(speech: boolean, ms: number, at: number): TurnEvent | null {
    if (speech) {
      this.lastSpeechAt = at
      this.speechMs += ms
      this.burstMs += ms
      if (!this.inTurn && this.burstMs >= MIN_SPEECH_MS) {
        this.inTurn = true
        this.paused = false
        return { type: 'speech_start', at }
      }
      if (this.inTurn && this.paused && this.burstMs >= MIN_SPEECH_MS) {
        this.paused = false
        return { type: 'speech_start', at }
      }
      return null
    }
    // Short bursts that never made a turn (or a resumption) do not add up across silence.
    this.burstMs = 0
    if (!this.inTurn) {
      this.speechMs = 0
      return null
    }
    if (this.paused) return null
    this.paused = true
    return { type: 'pause', at: this.lastSpeechAt, speechMs: this.speechMs }
  }

  /** The turn is over (the chart decided): the next speech starts a new one. */
  end(): void {
    this.inTurn = false
    this.paused = false
    this.speechMs = 0
    this.burstMs = 0
  }
}
