/**
 * What the caller has said in the current turn, as the speech-to-text engine reports it: the
 * pieces the engine finalised at pauses, then its live partial. A streaming engine whose words
 * judge turns is asked for its final words at every pause (Deepgram's `Finalize`, as Pipecat
 * sends it when its VAD stops), so a turn is judged on final words ~one final-latency after the
 * pause instead of waiting for the engine's own endpointing; later speech is the next piece.
 * Until that final comes (`finalDue`) the words so far are the engine's guess, not its words: no
 * verdict is taken on them, and the final is reported even when it says the same. An engine that
 * judges turns itself (capabilities `endOfTurn`) is not asked at pauses: its turn events go to the
 * chart (`turned`), and its final words are those of its end of turn.
 */

import { resample } from './codecs'
import type { FrameProcessor, SpeechToTextFrame } from './frames'
import type { Interruptible, Interruption } from './interrupt-signal'
import { SpeechError, type SttSession, type SttTurnEvent } from './ports/stt'
import type { TurnProfile } from './turn-waits'

const join = (...parts: string[]) => parts.filter(Boolean).join(' ')

export class CallerWords implements FrameProcessor<SpeechToTextFrame>, Interruptible {
  private turnText = ''
  private live = ''
  /** The words so far: the finalised pieces and the live partial. */
  heard = ''
  private flushing: Promise<void> | null = null
  /** The engine failed at a pause (not merely busy): the turn's final fails with it. */
  private failed: unknown = null
  private spokeSinceFlush = false
  /** The engine may still revise the live words (Deepgram's interim results). */
  private liveStable = true

  constructor(
    private readonly stt: SttSession,
    /** The words changed (after a partial, or a piece finalised at a pause). */
    private readonly changed: (heard: string, stable: boolean) => void,
    private readonly warn: (message: string, err: unknown) => void,
    /** The engine's own turn events, when it judges turns itself. */
    turned: (event: SttTurnEvent) => void = () => {},
  ) {
    if (stt.capabilities.interimWords) stt.onPartial?.((p) => this.partial(p.text, p.stable))
    if (stt.capabilities.endOfTurn) stt.onTurn?.(turned)
  }

  /** The caller's words are theirs whatever the agent does (a stop is their speech over it): the signal leaves nothing here to do. */
  interrupted(_signal: Interruption): void {}

  /** The engine decides when the caller's turn ends (Deepgram Flux); the rules' wait is only a backstop. */
  get vendorTurns(): boolean {
    return this.stt.capabilities.endOfTurn
  }

  /** Whether the engine's words judge turns (false: pocketsphinx, 78% of its words wrong). */
  get judge(): boolean {
    return this.stt.turnCues !== false
  }

  /**
   * The engine's final words for speech it heard are still to come: a Finalize is out, or its
   * latest words are interim. A pause judged now would be judged on words it may add to ("Do you
   * still" before "have the"); the final, when it comes, is reported (`changed`) and judged.
   */
  get finalDue(): boolean {
    return this.flushes && (this.flushing !== null || !this.liveStable)
  }

  /** The end-of-turn waits this engine calls for (turn-waits.ts): `hosted` when its final words judge every pause, else `local` (the voice alone). */
  get profile(): TurnProfile {
    return this.flushes ? 'hosted' : 'local'
  }

  /** A streaming engine whose words judge turns, and that does not end turns itself: asked for its final words at every pause. */
  private get flushes(): boolean {
    return this.stt.capabilities.interimWords && this.judge && !this.vendorTurns
  }

  /** The caller's audio, to the engine at its rate; a window of speech the VAD heard in it. */
  push(frame: SpeechToTextFrame): void {
    if (frame.kind === 'audio') {
      this.stt.push(resample(frame.pcm, frame.sampleRate, this.stt.sampleRate), frame.streamMs)
      return
    }
    this.spokeSinceFlush = true
    this.stt.speech?.()
  }

  /** The caller paused: a streaming engine finalises what it heard so far. */
  paused(): void {
    if (!this.flushes || this.flushing) return
    this.spokeSinceFlush = false
    this.flushing = this.stt.finalize().then(
      (piece) => {
        this.flushing = null
        this.turnText = join(this.turnText, piece.trim())
        this.partial('', true, true)
      },
      (err) => {
        this.flushing = null
        this.warn('speech-to-text failed at a pause', err)
        if (!(err instanceof SpeechError && err.busy)) this.failed ??= err
      },
    )
  }

  /** The turn is over: the pieces finalised at pauses and whatever was said after the last of them. Rejects when the engine fails. */
  async final(): Promise<string> {
    if (this.flushing) await this.flushing
    if (this.failed) throw this.failed
    const rest = !this.flushes || this.spokeSinceFlush || this.live ? (await this.stt.finalize()).trim() : ''
    const text = join(this.turnText, rest)
    this.forget()
    return text
  }

  /** Words the caller said over the agent, let go (the engine's too). */
  dropped(): void {
    this.forget()
    void this.stt.finalize().catch(() => '')
  }

  private forget(): void {
    this.turnText = ''
    this.live = ''
    this.liveStable = true
    this.heard = ''
  }

  /** `final`: the words of a Finalize, reported even when they are the words heard already. */
  private partial(live: string, stable: boolean, final = false): void {
    if (!this.judge) return
    this.live = live
    this.liveStable = stable
    const text = join(this.turnText, live)
    if (text === this.heard && !final) return
    this.heard = text
    this.changed(text, stable)
  }
}
