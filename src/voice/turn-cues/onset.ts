/**
 * What the caller's audio says about speech that starts over the agent, window by window of the
 * VAD, for the chart's barge-in rule (machines/voice-turn-setup.ts `bargesIn`): how long the
 * stretch of speech has gone on, and how far each window of it stands above the loudest agent
 * audio that could be echoing back in it. Measurements only: what they mean for the call is the
 * chart's decision. No clock of its own: each window comes with the time its audio arrived.
 */
import type { OnsetWindow } from '../../../machines/voice-turn-events'
import { resample } from '../codecs'
import { SILENT_DB } from './agent-echo'

/** The rate the cues are read at: the phone line's, where every caller's audio has been. */
const RATE = 8_000
/** Audio kept: a VAD window (32 ms) with room. */
const KEPT = RATE / 10
/**
 * The onset kept for the rule: the last second of the stretch (the rule's longest threshold is
 * well under it; a long stretch of the agent's own echo is not kept whole).
 */
export const ONSET_KEPT_MS = 1_000
/**
 * How far back the agent's audio may have played and still be echoing in what arrives now: the
 * line's own round trip (Twilio's media path and the handset, 100–300 ms on a PSTN call; nothing on
 * loopback) plus the acoustic path of a speakerphone (tens of ms). Half a second covers both.
 */
export const ECHO_LOOKBACK_MS = 500

export type { OnsetWindow }

export class OnsetCues {
  private readonly ring = new Int16Array(KEPT)
  /** Samples (at RATE) pushed since the call began. */
  private total = 0
  /** The current stretch of speech, newest last (empty after a window without speech). */
  private stretch: OnsetWindow[] = []

  /** @param agentLevel the loudest agent audio playing between two moments (AgentEcho.loudest). */
  constructor(private readonly agentLevel: (from: number, to: number) => number) {}

  /** Audio from the line (any rate), before its windows are read; returns where it starts (samples at RATE). */
  push(pcm: Int16Array, rate: number): number {
    const line = rate === RATE ? pcm : resample(pcm, rate, RATE)
    const base = this.total
    for (let i = 0; i < line.length; i++) this.ring[(this.total + i) % KEPT] = line[i]!
    this.total += line.length
    return base
  }

  /**
   * A VAD window ending `end` samples (at `rate`) into the audio pushed from `base`, which arrived
   * at `at`: read when it is speech; a window without speech ends the stretch.
   */
  window(base: number, end: number, rate: number, speech: boolean, ms: number, at: number): void {
    if (!speech) {
      this.stretch = []
      return
    }
    const to = Math.min(this.total, base + Math.round((end * RATE) / rate))
    const size = Math.min(KEPT, Math.round((ms * RATE) / 1000))
    let sum = 0
    for (let i = to - size; i < to; i++) {
      const x = this.sample(i)
      sum += x * x
    }
    const rms = Math.sqrt(sum / size) / 32768
    const db = rms > 0 ? 20 * Math.log10(rms) : SILENT_DB
    const agent = this.agentLevel(at - ms - ECHO_LOOKBACK_MS, at)
    this.stretch.push({ ms, overAgentDb: agent <= SILENT_DB ? 120 : Math.round(db - agent) })
    let kept = this.stretch.reduce((n, w) => n + w.ms, 0)
    while (kept > ONSET_KEPT_MS) kept -= this.stretch.shift()!.ms
  }

  /** The last window of speech read (null after a window without speech). */
  get last(): OnsetWindow | null {
    return this.stretch.at(-1) ?? null
  }

  /** The stretch of speech so far (the last ONSET_KEPT_MS of it), oldest first. */
  get onset(): readonly OnsetWindow[] {
    return [...this.stretch]
  }

  /** The caller's audio at sample `i` (since the call began), 0 outside what is kept. */
  private sample(i: number): number {
    return i < 0 || i < this.total - KEPT || i >= this.total ? 0 : this.ring[i % KEPT]!
  }
}
