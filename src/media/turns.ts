/**
 * Endpointing: from per-window speech decisions to the caller's turns. Speech starts after
 * MIN_SPEECH_MS of speech (a click is not a turn); the turn ends after `silenceMs` without speech.
 *
 * The default silence is 700 ms (per agent: `voice.endpointingMs`, README): conversational gaps
 * between turns are ~200 ms, but pauses inside one speaker's turn run 500–700 ms, and cutting a
 * caller off mid-thought costs more than 200 ms of extra wait. Deepgram's and LiveKit's own
 * defaults sit in the same range (300–800 ms).
 */
export const DEFAULT_SILENCE_MS = 700
export const MIN_SILENCE_MS = 200
export const MAX_SILENCE_MS = 3_000
/** Two Silero windows: one window of speech is usually a click or a breath. */
export const MIN_SPEECH_MS = 64

export type TurnEvent =
  | { type: 'speech_start'; at: number }
  /** `at` is when the last speech window ended: the end of the caller's speech. */
  | { type: 'speech_end'; at: number; speechMs: number }

export class TurnDetector {
  private speechMs = 0
  private silentMs = 0
  private inTurn = false
  private lastSpeechAt = 0

  constructor(private readonly silenceMs = DEFAULT_SILENCE_MS) {}

  get speaking(): boolean {
    return this.inTurn
  }

  /** Speech so far in the current turn. */
  get turnSpeechMs(): number {
    return this.speechMs
  }

  /** How long the current turn has lasted at `at`, short pauses inside it included (0 outside a turn). */
  turnLastedMs(at: number): number {
    return this.inTurn ? at - this.startedAt : 0
  }

  private startedAt = 0

  /** One analysis window ending at `at` (ms). */
  window(speech: boolean, ms: number, at: number): TurnEvent | null {
    if (speech) {
      this.silentMs = 0
      this.lastSpeechAt = at
      this.speechMs += ms
      if (!this.inTurn && this.speechMs >= MIN_SPEECH_MS) {
        this.inTurn = true
        this.startedAt = at - this.speechMs
        return { type: 'speech_start', at }
      }
      return null
    }
    if (!this.inTurn) {
      // Short bursts before a turn started do not add up across silence.
      this.silentMs += ms
      if (this.silentMs >= this.silenceMs) this.speechMs = 0
      return null
    }
    this.silentMs += ms
    if (this.silentMs < this.silenceMs) return null
    const event: TurnEvent = { type: 'speech_end', at: this.lastSpeechAt, speechMs: this.speechMs }
    this.inTurn = false
    this.speechMs = 0
    this.silentMs = 0
    return event
  }
}
