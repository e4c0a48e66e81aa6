/**
 * Speech that stopped the agent: was it the caller taking the turn, or only a listener's noise?
 * The agent goes quiet as soon as the caller's voice comes in over it (the chart's barge-in rule,
 * machines/voice-turn-setup.ts `bargesIn`); this decides afterwards, once that speech has ended or
 * run past the bound, whether the agent picks its sentence up again or answers. One rule, row by
 * row (the first that matches wins):
 *
 *   | what was heard                                               | verdict      | the agent        |
 *   |--------------------------------------------------------------|--------------|------------------|
 *   | the agent's own backchannels, or fewer words than its         | backchannel  | resumes          |
 *   | `minWords` (its `voice.interruptions` dial, dials.ts)         |              |                  |
 *   | a stop word anywhere ("stop", "wait", "no", "hold on", …)     | interruption | answers          |
 *   | words not to be trusted that sound like one ("top", "way")    | interruption | answers          |
 *   | more speech than the bound (MAX_BACKCHANNEL_MS)               | interruption | answers          |
 *   | words the engine can be trusted with: a backchannel or none   | backchannel  | resumes          |
 *   | words the engine can be trusted with: anything else           | interruption | answers          |
 *   | words not to be trusted (pocketsphinx), within the bound      | backchannel  | resumes          |
 *
 * With no trustworthy words (pocketsphinx hears espeak-ng's "Mhm." as "i can"), only the speech's
 * length tells a backchannel from a turn; with a vendor's words, the words do.
 */
import { SILENCE_TIMEOUT_MS, type VoiceTurnInput } from '../../machines/voice-turn'
import type { CallLine } from './call-line'
import { DEFAULT_DIALS, heldBack, type VoiceDials } from './dials'
import { isBackchannel } from './phrases'

/**
 * The most speech (the VAD's speech windows, ms) a backchannel takes. `wordless`, when the words
 * cannot be trusted: 800 ms. The corpus's 24 backchannels (bench/turn-corpus/cases.ts, espeak-ng
 * through μ-law and Silero) run 320–704 ms of speech ("Mhm." the longest); only a run ("Okay,
 * yeah.": 928–1,088 ms) is longer, and every real interruption but the one-word ones runs 928 ms
 * or more (through the session's caller-audio path, as bench:barge-in-rules runs it). `worded`,
 * when the words decide: 2,000 ms, a run of MAX_BACKCHANNEL_RUN (4) acknowledgements at the
 * corpus's mean of ~470 ms each; past it the engine has missed words.
 */
export const MAX_BACKCHANNEL_MS = { wordless: 800, worded: 2_000 } as const

/** Words that take the turn however short: what callers say to stop someone (the corpus's interruptions open with them). */
export const STOP_WORDS = ['stop', 'wait', 'no', 'nope', 'hold on', 'hang on', 'one moment', 'one second', 'just a second', 'excuse me', 'sorry']

const wordsOf = (text: string) =>
  ` ${text
    .toLowerCase()
    .replace(/[^a-z\s]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()} `

/** Whether `text` holds a word that takes the turn however short it is. */
export function hasStopWord(text: string): boolean {
  const said = wordsOf(text)
  return STOP_WORDS.some((w) => said.includes(` ${w} `))
}

export interface OverlapSaid {
  /** The final words of the speech over the agent ('' when none). */
  text: string
  /** The caller's speech in it, ms (the VAD's speech windows, pauses inside it left out). */
  speechMs: number
  /** The engine's words judge turns (a vendor's); false for pocketsphinx. */
  wordsJudge: boolean
  /** Words not to be trusted that sound like a stop word all the same (pocketsphinx's "top" for "stop"). */
  soundsLikeStop?: boolean
}

export interface OverlapVerdict {
  backchannel: boolean
  /** Which row decided, for the chart's `why`. */
  why: string
}

/** The bound on a backchannel's speech for an engine whose words judge turns or do not. */
export const backchannelMaxMs = (wordsJudge: boolean): number => MAX_BACKCHANNEL_MS[wordsJudge ? 'worded' : 'wordless']

/**
 * The rule above: whether speech that stopped the agent was only a backchannel (the agent resumes)
 * or the caller taking the turn; `interruptions`: the agent's dial, whose words come first.
 */
export function judgeOverlap(said: OverlapSaid, interruptions: VoiceDials['interruptions'] = DEFAULT_DIALS.interruptions): OverlapVerdict {
  const { text, speechMs, wordsJudge } = said
  const spoke = `${Math.round(speechMs)} ms of speech`
  if (text && !isBackchannel(text) && heldBack(text, interruptions)) return { backchannel: true, why: `"${text}" is held back by the agent's interruption dial` }
  if (hasStopWord(text)) return { backchannel: false, why: `"${text}" has a stop word: the caller takes the turn` }
  if (!wordsJudge && said.soundsLikeStop) return { backchannel: false, why: `"${text}" sounds like a stop word: the caller takes the turn` }
  const boundMs = backchannelMaxMs(wordsJudge)
  if (speechMs > boundMs) return { backchannel: false, why: `${spoke} over the agent, past a backchannel's ${boundMs} ms: the caller takes the turn` }
  if (wordsJudge) {
    if (!text || isBackchannel(text)) return { backchannel: true, why: text ? `"${text}" is a backchannel` : 'no words' }
    return { backchannel: false, why: `"${text}" is not a backchannel: the caller takes the turn` }
  }
  return { backchannel: true, why: `${spoke}, within a backchannel's ${boundMs} ms` }
}

/**
 * A turn's final words as the chart takes them (`words.final`): for speech that stopped the agent
 * (`interrupted`), the rule's verdict, with why when the words alone do not say (`wordsJudge`
 * false); for any other turn, whether its words are only a backchannel.
 */
export function finalVerdict(said: OverlapSaid, interrupted: boolean, interruptions: VoiceDials['interruptions'] = DEFAULT_DIALS.interruptions): { backchannel: boolean; why?: string } {
  if (!interrupted) return { backchannel: heldBack(said.text, interruptions) }
  const verdict = judgeOverlap(said, interruptions)
  return said.wordsJudge ? { backchannel: verdict.backchannel } : verdict
}

/** The turn-taking chart's input for a call: its limits, and what speech over the agent may do (the agent's dials, this rule's bound). */
export function turnInput(line: CallLine, dials: VoiceDials, wordsJudge: boolean): VoiceTurnInput {
  const { interruptions } = dials
  return {
    callLimitMs: line.maxCallSeconds * 1000,
    silenceMs: line.silenceTimeoutMs ?? SILENCE_TIMEOUT_MS,
    unavailable: !!line.unavailable,
    interrupts: interruptions.enabled,
    ...(interruptions.minSpeechMs === null ? {} : { minInterruptionMs: interruptions.minSpeechMs }),
    backchannelMaxMs: backchannelMaxMs(wordsJudge),
  }
}
