/**
 * A live call's turn-taking (docs/design.md: in memory only; audio-rate events never go through the
 * persisted actor queue). This chart decides when the caller's turn is over and when the agent is
 * interrupted; the voice session (src/media/session.ts) feeds it what the VAD and the
 * speech-to-text engine report and carries out its named actions. Watching a call in the
 * inspector (`INSPECT=1`) shows why the agent waited: `maybeDone` holds the end-of-turn rule that
 * chose the wait (`context.why`), and the wait is the chart's own delay.
 *
 *   opening ─reply.done→ listening ─speech.start→ callerSpeaking ─speech.pause→ maybeDone
 *   callerSpeaking ─transcript→ (the words read as a whole turn: the reply may start early)
 *   maybeDone ─speech.start→ callerSpeaking (the caller went on: any early reply is cancelled)
 *   maybeDone ─after(endOfTurn)→ thinking ─reply.audio→ speaking ─reply.done→ listening
 *   opening | speaking | thinking ─bargeIn→ interrupted ─speech.pause→ maybeDone
 *   thinking ─reply.none→ listening (noise, or a backchannel that resumes the cut sentence)
 *
 * The wait in `maybeDone` counts from the caller's last speech (`pausedAt`): the session sends
 * what is left of it, so a transcript that changes during the pause re-judges the turn without
 * starting the wait over. The chart reads no clock itself; its delay runs on the actor's clock.
 */
import { assign, setup } from 'xstate'

export type VoiceTurnState = 'opening' | 'listening' | 'callerSpeaking' | 'maybeDone' | 'thinking' | 'speaking' | 'interrupted' | 'ended'

export interface VoiceTurnContext {
  /** What the caller has said so far this turn (the engine's partial transcript), '' when none. */
  text: string
  /** When the caller's speech paused (the session's clock, ms). */
  pausedAt: number
  /** What is left of the silence that ends the turn (from entering `maybeDone`), and the rule that chose it. */
  waitMs: number
  why: string
  /** The end-of-turn rule's verdict on `text` (end-of-turn.ts): `complete` and `number` turns get an early reply. */
  shape: string
  /** The agent was cut off in this turn (its next reply may resume its sentence). */
  interrupted: boolean
}

export type VoiceTurnEvent =
  /** The VAD heard the caller start (or go on) speaking. */
  | { type: 'speech.start' }
  /** The caller's speech paused at `at`; the end-of-turn rule leaves `waitMs` to wait for `text`. */
  | { type: 'speech.pause'; at: number; text: string; waitMs: number; why: string; shape: string }
  /** The transcript changed during the pause: re-judged; `waitMs` is what is left from now. */
  | { type: 'transcript'; text: string; waitMs: number; why: string; shape: string }
  /** Caller speech over the agent long enough to be meant (not a backchannel). */
  | { type: 'bargeIn' }
  /** The first audio of the agent's reply left for the caller. */
  | { type: 'reply.audio' }
  /** The agent's audio has played out (or the opening did). */
  | { type: 'reply.done' }
  /** The turn had nothing to answer (noise, a backchannel): back to listening. */
  | { type: 'reply.none' }
  | { type: 'call.end' }

export const voiceTurnMachine = setup({
  types: { context: {} as VoiceTurnContext, events: {} as VoiceTurnEvent },
  actions: {
    /** Start the reply on what was said before the wait is over, when the turn reads as done (nothing of it is heard or kept until `commitTurn`). */
    preempt: () => {},
    /** The caller went on: a reply started early is cancelled. */
    cancelPreempt: () => {},
    /** The turn is over: take the final transcript and answer it (or keep the early reply when it matches). */
    commitTurn: () => {},
    /** Stop the agent's audio now (`clear`), cancel its reply. */
    stopAgent: () => {},
  },
  delays: {
    /** What is left of the end-of-turn wait (the session counts it from the caller's last speech). */
    endOfTurn: ({ context }) => context.waitMs,
  },
}).createMachine({
  id: 'voiceTurn',
  initial: 'opening',
  context: { text: '', pausedAt: 0, waitMs: 0, why: '', shape: 'unknown', interrupted: false },
  on: { 'call.end': '.ended' },
  states: {
    // The opening is the agent speaking: the caller talking over it is a barge-in (or a
    // backchannel), judged as over any reply, not a turn of its own while the opening plays on.
    opening: {
      on: { 'reply.done': 'listening', bargeIn: { target: 'interrupted', actions: 'stopAgent' } },
    },
    listening: {
      entry: assign({ text: '', interrupted: false }),
      // The agent speaks on its own too: a resumed sentence, a keypad answer, a goodbye.
      on: { 'speech.start': 'callerSpeaking', 'reply.audio': 'speaking' },
    },
    callerSpeaking: {
      on: {
        // Words that already read as a whole turn may get their reply started before the pause.
        transcript: { actions: [assign(({ event }) => ({ text: event.text, why: event.why, shape: event.shape })), 'preempt'] },
        'speech.pause': { target: 'maybeDone', actions: assign(({ event }) => ({ text: event.text, pausedAt: event.at, waitMs: event.waitMs, why: event.why, shape: event.shape })) },
      },
    },
    maybeDone: {
      entry: 'preempt',
      after: { endOfTurn: { target: 'thinking', actions: 'commitTurn' } },
      on: {
        'speech.start': { target: 'callerSpeaking', actions: 'cancelPreempt' },
        transcript: { target: 'maybeDone', reenter: true, actions: assign(({ event }) => ({ text: event.text, waitMs: event.waitMs, why: event.why, shape: event.shape })) },
      },
    },
    thinking: {
      on: {
        'reply.audio': 'speaking',
        'reply.none': 'listening',
        'reply.done': 'listening',
        bargeIn: { target: 'interrupted', actions: 'stopAgent' },
      },
    },
    speaking: {
      on: { 'reply.done': 'listening', bargeIn: { target: 'interrupted', actions: 'stopAgent' } },
    },
    interrupted: {
      entry: assign({ interrupted: true }),
      on: {
        'speech.pause': { target: 'maybeDone', actions: assign(({ event }) => ({ text: event.text, pausedAt: event.at, waitMs: event.waitMs, why: event.why, shape: event.shape })) },
        'reply.audio': 'speaking',
      },
    },
    ended: { type: 'final' },
  },
})
