/**
 * An agent's voice dials (`voice.speed`, `voice.patience`, `voice.interruptions`, docs/api/voice.md
 * "Dials"): how fast it speaks, how long it waits for a caller who paused, and what speech over it
 * takes the turn. Each one's default is the service's own behaviour, so an agent that sets nothing
 * is served exactly as without them.
 */
import type { EndOfTurn } from './end-of-turn'
import { isBackchannel } from './phrases'

export const PATIENCE_LEVELS = ['quick', 'normal', 'patient'] as const
export type PatienceLevel = (typeof PATIENCE_LEVELS)[number]

export interface VoiceDials {
  /** Speaking rate against the engine's own (1); null: the engine's own. */
  speed: number | null
  /** `waitMs`, when given, replaces the level: no pause shorter than it ends a turn. */
  patience: { level: PatienceLevel; waitMs: number | null }
  /** `minSpeechMs` and `minWords` null: the service's rules (MIN_INTERRUPTION_MS, any word that is not a backchannel). */
  interruptions: { enabled: boolean; minSpeechMs: number | null; minWords: number | null; backchannels: string[] }
}

export const DEFAULT_DIALS: VoiceDials = {
  speed: null,
  patience: { level: 'normal', waitMs: null },
  interruptions: { enabled: true, minSpeechMs: null, minWords: null, backchannels: [] },
}

/**
 * Speaking rates every engine takes: ElevenLabs' `voice_settings.speed` accepts 0.7–1.2 (OpenAI's
 * `speed` 0.25–4.0 and espeak-ng's 80–450 words a minute are wider), and an agent's engine is the
 * workspace's choice (BYOK), so its rate must hold on any of them.
 */
export const SPEED_MIN = 0.7
export const SPEED_MAX = 1.2

/**
 * A `quick` agent answers any turn whose words do not trail off after at most this much silence:
 * Deepgram's own endpointing default (300 ms, src/providers/stt/deepgram.ts), the vendor's idea of
 * a responsive agent. Plainly complete turns keep their 200 ms.
 */
export const QUICK_CAP_MS = 300
/**
 * A `patient` agent's least wait on any turn, by engine profile. Local (no words judge turns,
 * pocketsphinx): 1,000 ms, the longest pause inside a turn in issue 46's corpus (median 600 ms),
 * so none of them is cut (its offline sweep of a fixed wait: 900 ms still cut 2.3%). Hosted (a
 * vendor's words judge turns too, and words that trail off wait `upper` anyway): 800 ms, which cut
 * 6.8% of those pauses on no words at all in the same sweep.
 */
export const PATIENT_FLOOR_MS = { local: 1_000, hosted: 800 } as const

/**
 * The end-of-turn rules' wait (end-of-turn.ts) as this agent's patience has it. `wordsJudge`: the
 * engine's words judge turns (the hosted profile); without them the local profile's numbers apply.
 * `normal` with no `waitMs` is the rules' own verdict, unchanged.
 */
export function withPatience(judged: EndOfTurn, patience: VoiceDials['patience'], wordsJudge: boolean): EndOfTurn {
  if (patience.waitMs !== null) {
    return judged.waitMs >= patience.waitMs ? judged : { ...judged, waitMs: patience.waitMs, why: `${judged.why}; the agent waits at least ${patience.waitMs} ms` }
  }
  if (patience.level === 'quick') {
    // Words that trail off, and words whose final is still due, wait their full time whatever the level.
    if (judged.shape === 'trailing' || judged.shape === 'pending' || judged.waitMs <= QUICK_CAP_MS) return judged
    return { ...judged, waitMs: QUICK_CAP_MS, why: `${judged.why}; a quick agent waits ${QUICK_CAP_MS} ms` }
  }
  if (patience.level === 'patient') {
    const floor = PATIENT_FLOOR_MS[wordsJudge ? 'hosted' : 'local']
    return judged.waitMs >= floor ? judged : { ...judged, waitMs: floor, why: `${judged.why}; a patient agent waits ${floor} ms` }
  }
  return judged
}

const normalised = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z'\s-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()

/**
 * Words said over the agent that do not take the turn from it: a backchannel (phrases.ts, and the
 * agent's own extra ones), or fewer words than the agent's `minWords`. The agent resumes its
 * sentence instead of answering them (the chart's `falseInterruption`).
 */
export function heldBack(text: string, interruptions: VoiceDials['interruptions']): boolean {
  if (isBackchannel(text)) return true
  const said = normalised(text)
  if (!said) return false
  if (interruptions.backchannels.some((b) => normalised(b) === said)) return true
  return interruptions.minWords !== null && said.split(' ').length < interruptions.minWords
}
