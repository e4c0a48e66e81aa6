/**
 * A speech-to-speech call's turns on the call's latency record (latency.ts), as the cascaded
 * pipeline's: from the end of the caller's speech to the first audio sent and to its first mark
 * echoed. The model has no separate transcript, first token or first synthesised byte: its turn's
 * end stands for the final transcript and those stages stay null. Where the caller's speech ended
 * is a place in the audio sent to the model (`audio_end_ms`, or our VAD's last speech window),
 * turned into the session's clock by how much audio has been sent since.
 */
import type { TurnLatency } from './latency'

export class RealtimeLatency {
  /** The caller's audio sent to the model so far, ms. */
  private sentMs = 0
  private turns = 0
  private open: TurnLatency | null = null

  constructor(
    private readonly now: () => number,
    private readonly report: (t: TurnLatency) => void,
  ) {}

  /** `ms` more of the caller's audio went to the model. */
  sent(ms: number): void {
    this.sentMs += ms
  }

  /** The caller's turn ended (the model's VAD or ours); their speech ended `speechEndMs` into the audio sent. */
  ended(speechEndMs: number): void {
    this.flush()
    const now = this.now()
    this.open = {
      turn: ++this.turns,
      speechEndAt: now - Math.max(0, this.sentMs - speechEndMs),
      endpointedAt: now,
      sttFinalAt: now,
      llmFirstTokenAt: null,
      ttsFirstByteAt: null,
      firstAudioSentAt: null,
      firstMarkEchoedAt: null,
    }
  }

  /** The model's audio went to the line. */
  audio(): void {
    if (this.open && this.open.firstAudioSentAt === null) this.open.firstAudioSentAt = this.now()
  }

  /** The line echoed a mark of the model's audio: the turn's first heard, and the turn is reported. */
  echoed(): void {
    if (this.open?.firstAudioSentAt == null) return
    this.open.firstMarkEchoedAt = this.now()
    this.flush()
  }

  /** Reports the turn in progress as far as it went. */
  flush(): void {
    if (this.open) this.report(this.open)
    this.open = null
  }
}
