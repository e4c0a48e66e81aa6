/**
 * The caller's audio on its way to turn-taking: each frame goes to the recording and the
 * speech-to-text stage (`next`), then the VAD (on its own thread) judges it, in order, and the turn
 * detector (turns.ts) makes its windows into the caller's speech starting and pausing, each at the
 * time its audio arrived, not when the VAD got to it. What that means for the call is the chart's
 * decision (machines/voice-turn.ts); this only reports it.
 */
import { joinPcm } from './codecs'
import type { CallerAudioFrame, FrameProcessor, SpeechToTextFrame } from './frames'
import type { Interruptible, Interruption } from './interrupt-signal'
import { OnsetCues, type OnsetWindow } from './turn-cues/onset'
import { TurnDetector } from './turns'
import type { VadWindow, VoiceActivity } from './vad'

/** Inbound frames waiting for the VAD: 2 s of 20 ms frames. Frames arriving past it are dropped (counted). */
export const MAX_INBOUND_PENDING = 100

export interface CallerAudioParts {
  vad: VoiceActivity
  /** The speech-to-text stage: each frame of audio, then each window of speech the VAD heard in it. */
  next: FrameProcessor<SpeechToTextFrame>
  record?: { fromCaller(pcm: Int16Array, rate: number): void }
  now: () => number
  /** The call is over: nothing more is judged. */
  over: () => boolean
  /**
   * The caller's speech started (or went on after a pause), went on (each window of speech after
   * that), and paused: its last speech ended at `at`. `onset`: what the audio says about the
   * stretch of speech so far (turn-cues/onset.ts), for the chart's barge-in rule.
   */
  started: (onset: readonly OnsetWindow[]) => void
  goesOn: (onset: readonly OnsetWindow[]) => void
  paused: (at: number) => void
  /** The VAD's windows over a piece of the line's audio, before the turn detector reads them (the voice's end-of-turn cues). */
  judged?: (pcm: Int16Array, rate: number, windows: readonly VadWindow[]) => void
  /** The VAD has judged the line's audio up to `at` (a `now()` of its arrival), and the turn detector has read it. */
  caughtUp?: (at: number) => void
  warn: (message: string, err: unknown) => void
  /** The loudest agent audio playing between two moments (turn-cues/agent-echo.ts): what may echo back in the caller's audio. */
  agentLevel: (from: number, to: number) => number
}

export class CallerAudio implements FrameProcessor<CallerAudioFrame>, Interruptible {
  readonly detector = new TurnDetector()
  private readonly onset: OnsetCues
  /** Frames dropped because the VAD fell MAX_INBOUND_PENDING behind. */
  dropped = 0
  /** Arrival time of the last audio the VAD has judged. */
  judgedUpTo = 0
  /** Audio from the line not yet judged by the VAD, and whether it is being judged now. */
  private readonly backlog: { pcm: Int16Array; rate: number; arrivedAt: number; keyTone: boolean; streamMs?: number }[] = []
  private analysing = false

  constructor(private readonly parts: CallerAudioParts) {
    this.onset = new OnsetCues(parts.agentLevel)
  }

  /** The caller's speech goes on being judged whatever the agent does: the signal leaves nothing here to do. */
  interrupted(_signal: Interruption): void {}

  /**
   * A frame of the line's audio; with a key's tone in it, the VAD and the speech-to-text hear
   * silence in its place (the recording keeps the tone). Bounded: if the VAD falls behind, the
   * newest audio goes (counted), never memory.
   */
  push(frame: CallerAudioFrame): void {
    if (this.backlog.length >= MAX_INBOUND_PENDING) {
      this.dropped++
      return
    }
    this.backlog.push({ pcm: frame.pcm, rate: frame.sampleRate, arrivedAt: this.parts.now(), keyTone: frame.keyTone, streamMs: frame.streamMs })
    if (!this.analysing) void this.analyse()
  }

  /**
   * Judges the line's audio in order. Audio that arrived while the VAD was busy goes to it in one
   * piece, so after a stall the session catches up in one round trip to the model instead of
   * staying as far behind as the stall left it.
   */
  private async analyse(): Promise<void> {
    this.analysing = true
    try {
      while (this.backlog.length && !this.parts.over()) {
        const rate = this.backlog[0]!.rate
        let n = 1
        while (n < this.backlog.length && this.backlog[n]!.rate === rate) n++
        await this.judge(this.backlog.splice(0, n), rate)
      }
    } catch (err) {
      this.backlog.length = 0
      this.parts.warn('voice activity detection failed', err)
    } finally {
      this.analysing = false
    }
  }

  /** Frames at one rate, in order: to the recording, the STT, then the VAD's windows to the turn detector. */
  private async judge(frames: { pcm: Int16Array; arrivedAt: number; keyTone: boolean; streamMs?: number }[], rate: number): Promise<void> {
    const { next, vad } = this.parts
    for (const f of frames) {
      this.parts.record?.fromCaller(f.pcm, rate)
      if (f.keyTone) f.pcm = new Int16Array(f.pcm.length)
      next.push({ kind: 'audio', pcm: f.pcm, sampleRate: rate, streamMs: f.streamMs })
    }
    const pcm = frames.length === 1 ? frames[0]!.pcm : joinPcm(frames.map((f) => f.pcm))
    const windows = await vad.push(pcm, rate)
    if (this.parts.over()) return
    this.parts.judged?.(pcm, rate, windows)
    this.judgedUpTo = frames.at(-1)!.arrivedAt
    const base = this.onset.push(pcm, rate)
    // Each window's time is when the frame that completed it arrived.
    let frame = 0
    let upTo = frames[0]!.pcm.length
    for (const w of windows) {
      while (w.end > upTo && frame < frames.length - 1) upTo += frames[++frame]!.pcm.length
      const at = frames[frame]!.arrivedAt
      this.onset.window(base, w.end, rate, w.speech, w.ms, at)
      if (w.speech) next.push({ kind: 'speech', window: this.onset.last! })
      const event = this.detector.window(w.speech, w.ms, at)
      if (event?.type === 'speech_start') this.parts.started(this.onset.onset)
      else if (event?.type === 'pause') this.parts.paused(event.at)
      else if (w.speech && this.detector.speaking) this.parts.goesOn(this.onset.onset)
    }
    this.parts.caughtUp?.(this.judgedUpTo)
  }
}
