/**
 * What the end-of-turn rules are asked at each pause of a turn case, without the line: the case's
 * audio is fed to the voice cues (src/voice/turn-cues/voice-cues.ts) 20 ms at a time, with a speech
 * verdict per frame from its level (above -45 dBFS, the line test's audibility), and at the first
 * silent frame of each pause (where the session's VAD reports one) the cues and the words said so
 * far are kept, with how long the pause lasts; and once more after the last word. Any set of waits
 * is then judged on these at once (bench:turn-rules' curves), with no audio work per point.
 */
import type { TurnCues } from '../../src/voice/turn-cues/voice-cues'
import { VoiceCues } from '../../src/voice/turn-cues/voice-cues'
import { dbfs } from '../../test/support/twilio-line'
import type { render } from './audio'
import type { TurnCase } from './cases'

const FRAME = 160
const SPEECH_DBFS = -45

/** What the rules are told of the words: none (pocketsphinx), or the words said so far, with the script's punctuation or none. */
export type Words = 'none' | 'punctuated' | 'bare'

export interface Asked {
  /** The words before this point, by what the rules are told. */
  text: Record<Words, string>
  cues: TurnCues
  /** The pause's length (null: the end of the turn). */
  pauseMs: number | null
}

export interface Observed {
  c: TurnCase
  /** One per pause inside the turn, then the end. */
  asked: Asked[]
}

/** The words said before the `n`-th pause (all of them when `n` is past the last), as `words` gives them. */
function saidBefore(c: TurnCase, n: number, words: Words): string {
  if (words === 'none') return ''
  const said: string[] = []
  let pauses = 0
  for (const p of c.pieces) {
    if ('pauseMs' in p && pauses++ === n) break
    if ('say' in p) said.push(p.say)
  }
  const text = said.join(' ')
  return words === 'bare'
    ? text
        .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim()
    : text
}

export function observe(c: TurnCase, rendered: ReturnType<typeof render>): Observed {
  const { pcm, pauses } = rendered
  const audio = new VoiceCues()
  const asked: Asked[] = []
  const ask = (pauseMs: number | null) => {
    const n = asked.length
    asked.push({ text: { none: '', punctuated: saidBefore(c, n, 'punctuated'), bare: saidBefore(c, n, 'bare') }, cues: audio.cues(), pauseMs })
  }
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
    const frame = pcm.subarray(at, at + FRAME)
    audio.push(frame, 8_000, [{ speech: dbfs(frame) > SPEECH_DBFS, ms: 20, end: FRAME }])
    const p = pauses[asked.length]
    if (p && (at + FRAME) / 8 >= p.fromMs) ask(p.toMs - p.fromMs)
  }
  ask(null)
  return { c, asked }
}
