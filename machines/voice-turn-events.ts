/**
 * What the voice-turn chart (voice-turn.ts) hears and holds: the events the voice session sends it
 * (what the VAD, the speech-to-text engine, the keypad and the line reported), its input (the
 * call's limits) and its context (the turn so far, and why the chart did what it last did).
 */
/**
 * One VAD window of the caller's speech as the barge-in rule reads it (src/voice/turn-cues/onset.ts
 * measures it): its length, and its level against the loudest agent audio that could be echoing
 * back in it (dB; 120 when the agent was silent).
 */
export interface OnsetWindow {
  ms: number
  overAgentDb: number
}

export type VoiceTurnState = 'opening' | 'listening' | 'callerSpeaking' | 'maybeDone' | 'thinking' | 'speaking' | 'interrupted' | 'resuming' | 'ended'
/** Why a call ends on its own: each has its goodbye line (src/voice/phrases.ts VOICE_LINES). */
export type CallEndReason = 'timeLimit' | 'silence'

export interface VoiceTurnInput {
  /** The call's length limit (the agent's `maxCallSeconds`), ms. */
  callLimitMs: number
  /** Caller silence that ends the call, ms. */
  silenceMs: number
  /** No agent serves the line: speech over its one line never stops it. */
  unavailable: boolean
  /** The agent's `voice.interruptions.enabled`: false, speech over the agent never stops it (it talks through). Default true. */
  interrupts?: boolean
  /** The caller's own speech over the agent that stops it, ms (the agent's `voice.interruptions.minSpeechMs`); MIN_INTERRUPTION_MS unless given. */
  minInterruptionMs?: number
  /**
   * Speech over the agent longer than this (ms) is the caller taking the turn, whatever its words
   * (src/voice/interruption.ts MAX_BACKCHANNEL_MS); absent: only the words decide.
   */
  backchannelMaxMs?: number
}

/** How the speech that came in over the agent ended, counted per call. */
export interface OverlapCounts {
  /** It stopped the agent, which then resumed its sentence (a backchannel, a cough, an echo). */
  resumed: number
  /** It stopped the agent and took the turn: the agent answered it. */
  taken: number
  /** It did not stop the agent (its own echo, a click, or an interruption the rule missed): let go. */
  talkedOver: number
}

export interface VoiceTurnContext extends VoiceTurnInput {
  /** What the caller has said so far this turn (the engine's partial transcript), '' when none. */
  text: string
  /** When the caller's speech paused, and when the end-of-turn rule last judged it (the session's clock, ms). */
  pausedAt: number
  judgedAt: number
  /** The end-of-turn rule's silence for `text`, counted from `pausedAt`. */
  waitMs: number
  /** Why the chart did what it last did: the end-of-turn rule that chose a wait, why the agent stopped, resumed or ended. */
  why: string
  /** The end-of-turn rule's verdict on `text` (end-of-turn.ts): `complete` and `number` turns get an early reply. */
  shape: string
  /**
   * The caller's words of this turn before they went on: an answer withdrawn before any of it was
   * heard, or final words that came after the caller had started again. The turn's words are
   * these and what follows.
   */
  held: string
  /** The turn's words the agent is answering: held again if the caller goes on before hearing any of it. */
  answered: string
  /** The agent is answering this turn (its final words came and were not nothing). */
  answering: boolean
  /** The agent was cut off in this turn. */
  interrupted: boolean
  /** The speech that cut it off ran past `backchannelMaxMs`: the caller takes the turn whatever the words. */
  taken: boolean
  /** How the speech over the agent ended, this call so far. */
  overlaps: OverlapCounts
  /** The rest of the sentence the caller was hearing when the agent stopped ('' when none). */
  resume: string
  /** Keys pressed since the last sequence ended (by `#` or the digit gap). */
  digits: string
  /** Keys pressed while the caller was speaking: they join that turn's words. */
  keyed: string
  /** Speech over the agent that did not stop it is let go once the VAD has judged the audio up to here, this long from its pause. */
  overlapUntil: number
  overlapWaitMs: number
  /** Why the call ends and how it hangs up (the first reason wins), null while it goes on. */
  ending: CallEnding | null
  /** How long the goodbye may take before the call hangs up anyway. */
  goodbyeMs: number
}

export interface CallEnding {
  /** Said before hanging up; null: hang up now. */
  goodbye: string | null
  /** `voicemail`: a machine answered and the goodbye was the agent's voicemail message. */
  hangup: 'answered' | 'failed' | 'voicemail'
  error?: string
}

/** The end-of-turn rule's verdict on the caller's words (src/voice/end-of-turn.ts). */
interface Judged {
  text: string
  waitMs: number
  why: string
  shape: string
}

export type VoiceTurnEvent =
  /**
   * The VAD heard the caller start (or go on) speaking; `onset`: what the audio says about that
   * speech so far; `spokenMs`: the caller's speech in this turn so far, ms.
   */
  | { type: 'speech.start'; onset: readonly OnsetWindow[]; spokenMs?: number }
  /** The caller's speech goes on (another window of it), while the agent's audio plays or after it stopped for it. */
  | { type: 'speech.onset'; onset: readonly OnsetWindow[]; spokenMs?: number }
  /** The caller's speech paused: its last speech ended at `at`, judged at `now`. */
  | ({ type: 'speech.pause'; at: number; now: number } & Judged)
  /** The words changed; re-judged at `now` (the wait still counts from the pause). */
  | ({ type: 'transcript'; now: number } & Judged)
  /**
   * The turn's final words; `backchannel`: they are only an acknowledgement ("mhm", "okay");
   * `earlier`: they end a pause the caller went on from, and the turn has been ended again since
   * (a slow engine's final arriving after the next one was asked for): more words are coming.
   * `why`: what made speech over the agent a backchannel when its words alone do not say.
   */
  | { type: 'words.final'; text: string; backchannel: boolean; endpointedAt: number; sttFinalAt: number; earlier?: boolean; why?: string }
  /**
   * An engine that judges turns itself (voice-turn-vendor.ts): it says the turn has probably
   * ended (`turn.eager`), takes that back (`turn.resumed`), or ends it (`turn.end`; `at`: the
   * caller's last speech as the VAD heard it).
   */
  | { type: 'turn.eager'; text: string }
  | { type: 'turn.resumed' }
  | { type: 'turn.end'; text: string; at?: number }
  /** The turn's words were lost (the speech engine at capacity, refused them): the call goes on. */
  | { type: 'words.lost'; why: string }
  /** The agent's audio was cut (`clear`): what the caller had not yet heard of the sentence playing. */
  | { type: 'agent.stopped'; unheard: string }
  /** The first audio of the agent's reply left for the caller. */
  | { type: 'reply.audio' }
  /** The agent's audio has played out (or the opening did). */
  | { type: 'reply.done' }
  /** A key the caller pressed; `digits.done` ends the sequence (`#` and the digit gap send it too). */
  | { type: 'dtmf'; digit: string }
  | { type: 'digits.done' }
  /** The call is to end, `why`: `goodbye` said first when given. The first reason wins. */
  | ({ type: 'call.close'; why: string } & CallEnding)
  /** A call that leaves a voicemail waits to be told who answered; `answer.known` when it is. */
  | { type: 'answer.await' }
  | { type: 'answer.known' }
  /** The call is over (either side hung up). */
  | { type: 'call.end' }
