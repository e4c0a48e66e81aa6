/**
 * What the caller's audio says about their turn, kept as it arrives: the last seconds of it at the
 * line's rate and the VAD's verdict on each window, from which the end-of-turn rules read the
 * pitch at the end of the last voiced stretch (pitch.ts) and this caller's pauses so far
 * (pauses.ts). Pure bookkeeping: no clock, no timers; the voice session pushes what the VAD
 * judged and asks at a pause.
 */
import { resample } from '../codecs'
import { PauseHistory } from './pauses'
import { type FinalPitch, finalPitch } from './pitch'

/** The audio kept: the pitch needs the last 700 ms of speech; two seconds leave room for the pause after it. */
const KEPT_MS = 2_000
/** The rate the cues are read at: the phone line's, where every caller's audio has been. */
const RATE = 8_000

/** The second input of the end-of-turn rules (end-of-turn.ts): what the audio says. */
export interface TurnCues {
  /** The pitch movement over the end of the caller's last voiced stretch. */
  pitch: FinalPitch
  /** Its size in semitones (null: too little voicing to read). */
  semitones: number | null
  /** This caller's pauses inside turns so far (ms), oldest first. */
  pausesMs: readonly number[]
}

export class VoiceCues {
  private readonly ring = new Int16Array((KEPT_MS * RATE) / 1000)
  /** Samples pushed since the call began (at RATE): the ring's write position is this modulo its size. */
  private total = 0
  /** Where (in samples since the start) the last speech window ended, and the speech before it began after a silence. */
  private speechEnd = -1
  private readonly history = new PauseHistory()

  /** Audio from the line (any rate) and the VAD's windows over it (`end`: samples of `pcm` each window reaches). */
  push(pcm: Int16Array, rate: number, windows: readonly { speech: boolean; ms: number; end: number }[]): void {
    const base = this.total
    const line = rate === RATE ? pcm : resample(pcm, rate, RATE)
    this.write(line)
    for (const w of windows) {
      if (!w.speech) continue
      const end = base + Math.round((w.end * RATE) / rate)
      const start = end - Math.round((w.ms * RATE) / 1000)
      if (this.speechEnd >= 0 && start > this.speechEnd) this.history.gap(((start - this.speechEnd) * 1000) / RATE)
      this.speechEnd = Math.max(this.speechEnd, end)
    }
  }

  /** The cues as of now: the pitch at the end of the last speech the VAD heard, and the caller's pauses. */
  cues(): TurnCues {
    // Read once per stretch of speech: a transcript changing during the pause asks again.
    if (this.read?.at !== this.speechEnd) this.read = { at: this.speechEnd, ...(this.speechEnd < 0 ? { pitch: 'unknown' as const, semitones: null } : finalPitch(this.lastSpeech(), RATE)) }
    return { pitch: this.read.pitch, semitones: this.read.semitones, pausesMs: [...this.history.recent] }
  }

  private read: { at: number; pitch: FinalPitch; semitones: number | null } | null = null

  /** The kept audio up to the end of the last speech window (what is still in the ring). */
  private lastSpeech(): Int16Array {
    const from = Math.max(0, this.total - this.ring.length)
    const to = Math.min(this.speechEnd, this.total)
    const out = new Int16Array(Math.max(0, to - from))
    for (let i = 0; i < out.length; i++) out[i] = this.ring[(from + i) % this.ring.length]!
    return out
  }

  private write(pcm: Int16Array): void {
    for (let i = 0; i < pcm.length; i++) this.ring[(this.total + i) % this.ring.length] = pcm[i]!
    this.total += pcm.length
  }
}
