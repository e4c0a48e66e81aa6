/**
 * The voice-turn chart's (voice-turn.ts) named parts: the effects the voice session carries out
 * (src/voice/session.ts provides them), the guards it decides with, and the delays of its waits,
 * each with where its number comes from.
 */
import { setup } from 'xstate'
import type { CallEnding, CallEndReason, OnsetWindow, VoiceTurnContext, VoiceTurnEvent, VoiceTurnInput } from './voice-turn-events'

/** Caller silence (nobody speaking) that ends the call politely: Vapi's and Retell's default is 30 s. */
export const SILENCE_TIMEOUT_MS = 30_000
/** Keypad digits are collected until `#` or this long without one (a person typing a PIN pauses < 1 s). */
export const DTMF_GAP_MS = 1_500
/**
 * Silence that ends speech said over the agent that did not stop it (let go): the pauses inside one
 * speaker's turn run 500–700 ms, so a shorter gap between two words is not its end.
 */
export const OVERLAP_END_MS = 500
/** How long that decision waits for a VAD that has fallen behind before deciding on what it has: 2 s, as MAX_INBOUND_PENDING's backlog. */
export const VAD_CATCH_UP_MS = 2_000
/** How often it looks again meanwhile: a line frame. */
export const VAD_RECHECK_MS = 20
/**
 * An end-of-turn wait is over once the VAD has judged the line's audio to this near its end: one
 * Silero batch (two 20 ms line frames) is always in flight, and waiting for it on every turn would
 * add its round trip to every answer; a VAD hundreds of ms behind is what the check is for.
 */
export const TURN_JUDGED_SLACK_MS = 40
/**
 * Barge-in: when speech over the agent's audio, or over an answer released for the line whose
 * audio has not started yet (`thinking`), stops it (`bargesIn`). Each VAD window of the stretch of
 * speech is measured by src/voice/turn-cues/onset.ts; the rule, row by row:
 *
 *   | the caller's audio                                 | rule                                          | the agent |
 *   |----------------------------------------------------|-----------------------------------------------|-----------|
 *   | on a line no agent serves                          | `unavailable`                                 | goes on   |
 *   | the agent's own voice leaking back (speakerphone)  | a window ECHO_RETURN_LOSS_DB or more under the | goes on   |
 *   |                                                    | loudest agent audio of the last 0.5 s: echo,  |           |
 *   |                                                    | not the caller's                              |           |
 *   | the caller's own speech, MIN_INTERRUPTION_MS of it | `bargesIn`, judged at its start and again at  | stops now |
 *   |                                                    | each window while it goes on                  |           |
 *
 * Coughs, clicks, breaths and rustle mostly never reach the chart: Silero does not call them
 * speech for two windows running (bench:turn-taking's noise family: 0 of 12 stopped the agent). A
 * backchannel ("mhm", "okay") longer than MIN_INTERRUPTION_MS still stops the agent, which resumes
 * its sentence once the speech turns out to be one (`falseInterruption`, decided by
 * src/voice/interruption.ts on its words and length): no longer minimum keeps real interruptions
 * cleared within 300 ms (docs/benchmarks.md, "False barge-ins").
 */
/**
 * The caller's own speech over the agent this long stops it: two Silero windows, the turn
 * detector's MIN_SPEECH_MS. LiveKit's agents wait for `minDuration` of VAD speech, 500 ms by
 * default (agents-js agents/src/voice/agent_activity.ts `onVADInferenceDone`,
 * turn_config/interruption.ts), and accept a later stop for fewer false ones. Here the caller must
 * hear the agent stop within 300 ms of starting to speak, and Silero's own onset takes 60–380 ms of
 * that on the corpus's interruptions ("Stop, that is wrong." is heard as speech only from its
 * vowel): any minimum above this moved the decision's p95 past 700 ms, and up to 192 ms spared
 * one backchannel of 24 (`npm run bench:barge-in-rules`, docs/benchmarks.md "False barge-ins").
 */
export const MIN_INTERRUPTION_MS = 64
/**
 * A window this far or more under the loudest agent audio that played in the last
 * ECHO_LOOKBACK_MS is the agent's own echo (the Geigel double-talk test network echo cancellers
 * use: speech from the near end is louder than the far end's level less the echo return loss). A
 * speakerphone with no echo cancelling returns the agent 15–25 dB down (the corpus's echo family:
 * 20 dB, measured here 21–30 dB under the loudest); a caller talking over the agent is about as
 * loud as it at the line (the corpus's interruptions' windows: -18 to +8 dB, all but a few above
 * -12). 15 dB sits between.
 */
export const ECHO_RETURN_LOSS_DB = 15

/** A window of speech that is the agent's own echo (the table's echo row), not the caller's voice. */
export const isEcho = (w: OnsetWindow): boolean => w.overAgentDb <= -ECHO_RETURN_LOSS_DB

/** The caller's own speech in the onset (windows louder than the agent's echo could be), ms. */
export function ownSpeechMs(onset: readonly OnsetWindow[]): number {
  return onset.reduce((n, w) => n + (isEcho(w) ? 0 : w.ms), 0)
}

/** A line that never confirms a goodbye played still ends: ~15 characters a second of speech, plus this grace. */
export const GOODBYE_GRACE_MS = 3_000
export const GOODBYE_MS_PER_CHAR = 70

/**
 * How long a voicemail-dropping call waits to be told who answered before it speaks as to a
 * person: Twilio's answering-machine detection gives up after 30 s (MachineDetectionTimeout's
 * default) and reports `unknown`; 5 s more covers its callback's way here.
 */
export const ANSWERED_BY_WAIT_MS = 35_000

export const voiceTurnSetup = setup({
  types: { context: {} as VoiceTurnContext, events: {} as VoiceTurnEvent, input: {} as VoiceTurnInput },
  actions: {
    /** Start the reply on what was said before the wait is over, when the turn reads as done (nothing of it is heard or kept until `answer`). */
    preempt: (_, _params: { text: string; shape: string }) => {},
    /** The caller went on (or said nothing): a reply started early is cancelled. */
    cancelPreempt: () => {},
    /** The turn is over: end the caller's turn and take its final words (they come back as `words.final`). */
    commitTurn: () => {},
    /** Answer the final words (with the early reply when it matches): the caller's line, then the agent's. */
    answer: (_, _params: { text: string; keys: string; speechEndAt: number; endpointedAt: number; sttFinalAt: number }) => {},
    /** The caller went on before hearing any of the answer: it is cancelled with no trace (its words are held for the turn that goes on). */
    withdrawAnswer: () => {},
    /** Stop the agent's audio now (`clear`), cancel its reply; the session reports `agent.stopped`. */
    stopAgent: () => {},
    /** Say the rest of the sentence the caller was hearing when the agent stopped. */
    resumeSentence: (_, _params: { text: string }) => {},
    /** The caller's words were lost: the agent asks them to say it again. */
    askRepeat: () => {},
    /** Speech over the agent that did not stop it has ended: its words are let go. */
    letGo: () => {},
    /** A key sequence, as the caller's turn. */
    answerDigits: (_, _params: { digits: string }) => {},
    /** A reason to end the call came due: the session answers with `call.close` and the line to say. */
    endCall: (_, _params: { reason: CallEndReason; why: string }) => {},
    /** Say the goodbye (the call hangs up once it has played), or hang up now when there is none. */
    sayGoodbye: (_, _params: CallEnding) => {},
    hangUp: (_, _params: CallEnding) => {},
    /** No verdict on who answered came in time: the call goes on as answered by a person. */
    answeredUnknown: () => {},
  },
  guards: {
    /** The caller's speech may change what the agent does (not on a line no agent serves). */
    mayInterrupt: ({ context }) => !context.unavailable,
    /** Speech over the agent's audio that is the caller's own, long enough to be meant (the barge-in table above). */
    bargesIn: ({ context }, onset: readonly OnsetWindow[]) => !context.unavailable && context.interrupts !== false && ownSpeechMs(onset) >= (context.minInterruptionMs ?? MIN_INTERRUPTION_MS),
    /** The line is served by an agent (one that is not only says so and ends). */
    lineServed: ({ context }) => !context.unavailable,
    lineUnavailable: ({ context }) => context.unavailable,
    /** `#` ends a key sequence at once. */
    endsKeys: ({ event }) => event.type === 'dtmf' && event.digit === '#',
    /** Keys were pressed during the turn that just ended: they are answered with its words, whatever the words are. */
    keyedInTurn: ({ context }) => context.keyed !== '',
    /**
     * The final words after the agent was stopped are a backchannel or nothing (the session judges
     * them by src/voice/interruption.ts), the speech was not long enough to take the turn anyway,
     * and there is a sentence to pick up.
     */
    falseInterruption: ({ context, event }) =>
      event.type === 'words.final' && context.held === '' && context.interrupted && !context.taken && context.resume !== '' && (event.text === '' || event.backchannel),
    /** Nothing to answer: noise, or an acknowledgement that stopped the agent. */
    nothingSaid: ({ context, event }) => event.type === 'words.final' && context.held === '' && (event.text === '' || (context.interrupted && !context.taken && event.backchannel)),
    /** The caller's speech since it stopped the agent has run past a backchannel's length: the turn is theirs, whatever it says. */
    pastBackchannel: ({ context }, spokenMs: number | undefined) => context.backchannelMaxMs !== undefined && (spokenMs ?? 0) > context.backchannelMaxMs,
    /**
     * Nothing of the turn's answer has reached the caller: its final words are still coming, or its
     * first audio is not ready (the session knows). Speech now is the caller going on, not over
     * the agent: the turn continues.
     */
    answerUnheard: ({ context }) => !context.answering,
    /** The VAD has judged the line's audio up to `at` (it runs on its own thread and may be behind); the session knows. */
    audioJudged: (_, _params: { at: number }) => true,
  },
  delays: {
    /** What is left of the end-of-turn wait, counted from the caller's last speech. */
    endOfTurn: ({ context }) => Math.max(0, context.waitMs - (context.judgedAt - context.pausedAt)),
    callerSilence: ({ context }) => context.silenceMs,
    callLimit: ({ context }) => context.callLimitMs,
    dtmfGap: DTMF_GAP_MS,
    overlapEnd: ({ context }) => context.overlapWaitMs,
    vadRecheck: VAD_RECHECK_MS,
    vadCatchUp: ({ context }) => context.overlapWaitMs + VAD_CATCH_UP_MS,
    /** A turn's end waits no longer than this for a VAD that has fallen behind, then decides on what it has. */
    vadCatchUpTurn: VAD_CATCH_UP_MS,
    goodbyeGrace: ({ context }) => context.goodbyeMs,
    answeredByWait: ANSWERED_BY_WAIT_MS,
  },
})
