/**
 * Our own turn detection for a speech-to-speech call (realtime-session.ts, `service_vad`): the
 * model's VAD is off (`turn_detection: null`) and ours decides. The VAD (vad.ts) hears the caller's
 * audio window by window (turns.ts); speech starting is the session's barge-in, and a silence of
 * `waitMs` after the last speech, counted in the audio's own time, ends the turn (where the speech
 * ended, ms into the audio, goes with it): the session then
 * commits the model's input buffer and asks for a response. There are no words to judge at a
 * pause here (the model transcribes after the commit), so the wait is the end-of-turn rules' for
 * a pause with no words (turn-waits.ts LOCAL_WAITS.unknown), capped by the agent's `endpointingMs`.
 */
import { TurnDetector } from './turns'
import type { VoiceActivity } from './vad'

export class RealtimeTurns {
  private readonly detector = new TurnDetector()
  /** The caller's audio judged so far, ms. */
  private judgedMs = 0
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly vad: VoiceActivity,
    private readonly waitMs: number,
    private readonly on: { started(): void; ended(lastSpeechMs: number): void },
  ) {}

  /** The caller's audio, in order; judged in the order pushed. */
  push(pcm: Int16Array, sampleRate: number): void {
    this.queue = this.queue
      .then(async () => {
        for (const w of await this.vad.push(pcm, sampleRate)) this.window(w.speech, w.ms)
      })
      .catch(() => {})
  }

  private window(speech: boolean, ms: number): void {
    this.judgedMs += ms
    const event = this.detector.window(speech, ms, this.judgedMs)
    if (event?.type === 'speech_start') this.on.started()
    if (this.detector.inTurnNow && !this.detector.speaking && this.judgedMs - this.detector.lastSpeech >= this.waitMs) {
      const lastSpeech = this.detector.lastSpeech
      this.detector.end()
      this.on.ended(lastSpeech)
    }
  }
}
