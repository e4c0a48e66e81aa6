/**
 * A live call's turn-taking and every wait of it (docs/design.md: in memory only; audio-rate events
 * never go through the persisted actor queue). The voice session (src/voice/session.ts) is an
 * adapter: it tells this chart what the VAD, the speech-to-text engine, the keypad and the line
 * report, and carries out the effects the chart names. Every decision (the turn is over, the agent
 * stops, the agent resumes, the call ends) and every wait (end of turn, caller silence, the call's
 * length, the keypad's digit gap, speech over the agent settling, a goodbye's grace) is here, as
 * guards and `after` delays on the actor's clock: the system clock on a call, a simulated one in
 * tests. Watching a call in the inspector (`INSPECT=1`) or the console app shows *why* the agent
 * waited or stopped (`context.why`).
 *
 *   turn:    opening ─reply.done→ listening ─speech.start→ callerSpeaking ─speech.pause→ maybeDone
 *            callerSpeaking ─transcript→ (the words read as a whole turn: the reply may start early)
 *            maybeDone ─speech.start→ callerSpeaking (the caller went on: any early reply is cancelled)
 *            maybeDone ─after(endOfTurn), the VAD caught up→ thinking ─words.final→ (answer) ─reply.audio→ speaking ─reply.done→ listening
 *            thinking ─speech.start [answerUnheard]→ callerSpeaking (the caller went on before a word of the
 *              answer reached the line: it is withdrawn; their words are held and answered with the rest)
 *            opening | thinking | speaking | resuming ─speech.start / speech.onset [bargesIn]→ interrupted
 *              (.deciding ─speech.onset [pastBackchannel]→ .taken: the caller's speech ran past a backchannel's length)
 *              ─speech.pause→ maybeDone (the caller's own speech, long enough to be meant: not the agent's
 *              echo; in thinking, once the answer is released for the line)
 *            thinking ─words.final [falseInterruption]→ resuming (a backchannel or noise stopped the agent, and
 *              did not run past a backchannel's length: it says the rest of the sentence the caller was
 *              hearing) ─reply.audio→ speaking
 *            each speech over the agent is counted (`overlaps`): resumed, taken (answered), talked over (let go)
 *            thinking ─words.final [nothingSaid]→ listening
 *            thinking ─words.lost→ listening (the speech engine refused the words, at capacity: askRepeat)
 *            listening ─after(callerSilence)→ (endCall silence)
 *            an engine that judges turns itself ends them by its own events (turn.eager, turn.resumed,
 *              turn.end: voice-turn-vendor.ts); the rules' wait is then a backstop
 *   call:    open ─after(callLimit)→ (endCall timeLimit);  open ─call.close→ closing ─after(goodbyeGrace)→ (hangUp)
 *   keypad:  idle ─dtmf→ collecting ─after(dtmfGap) / dtmf # / digits.done→ idle (answerDigits; keys
 *            pressed while the caller speaks join that turn's words instead, answered with them)
 *   answer:  known ─answer.await→ awaiting ─answer.known / after(answeredByWait)→ known (answeredUnknown)
 *   overlap: none ─speech.pause [over the agent]→ settling ─after(overlapEnd), the VAD caught up→ none (letGo)
 *   any ─call.end→ ended
 *
 * The chart reads no clock: events carry the session's time (`now`) where a wait counts from an
 * earlier moment (the caller's last speech), and its delays run on the actor's clock.
 */
import { and, assign, or, raise, stateIn } from 'xstate'
import { ANSWER_REGION } from './voice-turn-answer'
import type { OverlapCounts, VoiceTurnEvent, VoiceTurnState } from './voice-turn-events'
import { GOODBYE_GRACE_MS, GOODBYE_MS_PER_CHAR, OVERLAP_END_MS, TURN_JUDGED_SLACK_MS, voiceTurnSetup } from './voice-turn-setup'
import { VENDOR_TURN } from './voice-turn-vendor'

export type { CallEnding, CallEndReason, OverlapCounts, VoiceTurnContext, VoiceTurnEvent, VoiceTurnInput, VoiceTurnState } from './voice-turn-events'
// Its constants and rules, for the session and the tests.
export * from './voice-turn-setup'

/** The agent is talking (or about to): caller speech now is over it. */
const AGENT_TALKING = ['opening', 'thinking', 'speaking', 'resuming'] as const

/** The turn's words: those held from before the caller went on, and `text`. */
const said = (context: { held: string }, text: string) => [context.held, text].filter(Boolean).join(' ')

/** The counts after an answer: a turn that stopped the agent took it. */
const tookTurn = (context: { interrupted: boolean; overlaps: OverlapCounts }): OverlapCounts => (context.interrupted ? { ...context.overlaps, taken: context.overlaps.taken + 1 } : context.overlaps)

/** Speech over the agent that did not stop it, let go: counted where an agent serves the line. */
const talkedOver = (context: { unavailable: boolean; overlaps: OverlapCounts }) => (context.unavailable ? {} : { overlaps: { ...context.overlaps, talkedOver: context.overlaps.talkedOver + 1 } })

/** The latency marks of an answer to the turn's final words. */
const marksOf = (context: { pausedAt: number }, e: { endpointedAt: number; sttFinalAt: number }) => ({ speechEndAt: context.pausedAt, endpointedAt: e.endpointedAt, sttFinalAt: e.sttFinalAt })

/**
 * Speech over the agent's audio (the opening, a reply, a resumed sentence): it stops the agent once
 * the barge-in rule says it is the caller's own voice, meant (voice-turn-setup.ts `bargesIn`),
 * judged at its start and again each window while it goes on.
 */
const BARGE_IN = {
  'speech.start': { guard: { type: 'bargesIn', params: ({ event }: { event: Extract<VoiceTurnEvent, { type: 'speech.start' }> }) => event.onset }, target: 'interrupted' },
  'speech.onset': { guard: { type: 'bargesIn', params: ({ event }: { event: Extract<VoiceTurnEvent, { type: 'speech.onset' }> }) => event.onset }, target: 'interrupted' },
} as const

/** The caller paused: the turn's words and the wait the end-of-turn rule chose for them. */
const fromPause = (e: Extract<VoiceTurnEvent, { type: 'speech.pause' }>) => ({ text: e.text, pausedAt: e.at, judgedAt: e.now, waitMs: e.waitMs, why: e.why, shape: e.shape })

export const voiceTurnMachine = voiceTurnSetup.createMachine({
  id: 'voiceTurn',
  initial: 'live',
  context: ({ input }) => ({
    ...input,
    text: '',
    pausedAt: 0,
    judgedAt: 0,
    waitMs: 0,
    why: '',
    shape: 'unknown',
    held: '',
    answered: '',
    answering: false,
    interrupted: false,
    taken: false,
    overlaps: { resumed: 0, taken: 0, talkedOver: 0 },
    resume: '',
    digits: '',
    keyed: '',
    overlapUntil: 0,
    overlapWaitMs: 0,
    ending: null,
    goodbyeMs: 0,
  }),
  on: { 'call.end': '.ended' },
  states: {
    live: {
      type: 'parallel',
      states: {
        turn: {
          initial: 'opening',
          // Speech over the agent, long enough to be meant (the detector's MIN_SPEECH_MS: not a
          // click): the agent stops at once, so the caller is not talked over while they speak.
          // Whether it was meant is judged on its words when the turn ends (words.final).
          states: {
            opening: {
              on: { 'reply.done': 'listening', ...BARGE_IN },
            },
            listening: {
              entry: assign({ text: '', held: '', answered: '', interrupted: false, taken: false, resume: '', keyed: '' }),
              after: { callerSilence: { actions: { type: 'endCall', params: { reason: 'silence', why: 'the caller said nothing for the silence timeout' } } } },
              on: {
                'speech.start': 'callerSpeaking',
                // Speech over the agent that did not stop it and goes on after its audio ended: the caller has the turn.
                'speech.onset': 'callerSpeaking',
                // The agent speaks on its own too: a keypad answer, a goodbye.
                'reply.audio': 'speaking',
                // A key is the caller doing something: the silence wait starts over.
                dtmf: { target: 'listening', reenter: true },
              },
            },
            callerSpeaking: {
              on: {
                ...VENDOR_TURN.callerSpeaking,
                // Words that already read as a whole turn may get their reply started before the pause.
                transcript: {
                  actions: [
                    assign(({ event }) => ({ text: event.text, why: event.why, shape: event.shape })),
                    { type: 'preempt', params: ({ context }) => ({ text: context.text, shape: context.shape }) },
                  ],
                },
                'speech.pause': { target: 'maybeDone', actions: assign(({ event }) => fromPause(event)) },
                // The final words of a turn the caller went on from: kept for this one.
                'words.final': { actions: assign(({ context, event }) => ({ held: said(context, event.text) })) },
              },
            },
            maybeDone: {
              entry: { type: 'preempt', params: ({ context }) => ({ text: context.text, shape: context.shape }) },
              // The wait is over only once the VAD has judged the audio up to its end: a VAD behind
              // (its thread late, a burst of frames) must not end a turn the caller already went on with.
              initial: 'waiting',
              states: {
                waiting: { after: { endOfTurn: 'confirming' } },
                confirming: {
                  after: { vadCatchUpTurn: { target: '#voiceTurn.live.turn.thinking', actions: 'commitTurn' } },
                  initial: 'judging',
                  states: {
                    judging: {
                      always: {
                        guard: { type: 'audioJudged', params: ({ context }) => ({ at: context.pausedAt + context.waitMs - TURN_JUDGED_SLACK_MS }) },
                        target: '#voiceTurn.live.turn.thinking',
                        actions: 'commitTurn',
                      },
                      after: { vadRecheck: { target: 'judging', reenter: true } },
                    },
                  },
                },
              },
              on: {
                ...VENDOR_TURN.maybeDone,
                'speech.start': { target: 'callerSpeaking', actions: 'cancelPreempt' },
                // The final words of a turn the caller went on from: kept for this one.
                'words.final': { actions: assign(({ context, event }) => ({ held: said(context, event.text) })) },
                // Re-judged without starting the wait over: it still counts from the pause.
                transcript: {
                  target: 'maybeDone',
                  reenter: true,
                  actions: assign(({ event }) => ({ text: event.text, judgedAt: event.now, waitMs: event.waitMs, why: event.why, shape: event.shape })),
                },
              },
            },
            thinking: {
              entry: assign({ answered: '', answering: false }),
              on: {
                'words.final': [
                  // The words of a pause the caller went on from, come after the turn was ended
                  // again: kept for the turn, whose own final words are still to come.
                  { guard: ({ event }) => !!event.earlier, actions: assign(({ context, event }) => ({ held: said(context, event.text) })) },
                  {
                    guard: 'keyedInTurn',
                    actions: [
                      assign(({ context, event }) => ({
                        why: 'the caller finished a turn with keys in it: the agent answers',
                        answered: said(context, event.text),
                        answering: true,
                        held: '',
                        overlaps: tookTurn(context),
                      })),
                      { type: 'answer', params: ({ context, event }) => ({ text: context.answered, keys: context.keyed, ...marksOf(context, event) }) },
                    ],
                  },
                  {
                    guard: 'falseInterruption',
                    target: 'resuming',
                    actions: [
                      'cancelPreempt',
                      assign(({ context, event }) => ({
                        why: event.text
                          ? `"${event.text}" was a backchannel${event.why ? ` (${event.why})` : ''}: the agent resumes its sentence`
                          : 'noise, not words, stopped the agent: it resumes its sentence',
                        overlaps: { ...context.overlaps, resumed: context.overlaps.resumed + 1 },
                      })),
                    ],
                  },
                  {
                    guard: 'nothingSaid',
                    target: 'listening',
                    actions: ['cancelPreempt', assign(({ event }) => ({ why: event.text ? `"${event.text}" was a backchannel: nothing to answer` : 'no words: nothing to answer' }))],
                  },
                  {
                    actions: [
                      assign(({ context, event }) => ({
                        why: 'the caller finished their turn: the agent answers',
                        answered: said(context, event.text),
                        answering: true,
                        held: '',
                        overlaps: tookTurn(context),
                      })),
                      { type: 'answer', params: ({ context, event }) => ({ text: context.answered, keys: '', ...marksOf(context, event) }) },
                    ],
                  },
                ],
                // The engine refused the turn's words (at capacity): not a reason to end the call.
                'words.lost': { target: 'listening', actions: ['cancelPreempt', 'askRepeat', assign(({ event }) => ({ why: `the caller's words were lost (${event.why}): the agent asks again` }))] },
                'reply.audio': 'speaking',
                'reply.done': 'listening',
                'speech.start': [
                  // The caller went on before hearing a word of the answer: the turn continues, the answer goes.
                  {
                    guard: and(['answerUnheard', 'mayInterrupt']),
                    target: 'callerSpeaking',
                    actions: [
                      'withdrawAnswer',
                      assign(({ context }) => ({
                        held: context.answered || context.held,
                        answered: '',
                        answering: false,
                        why: 'the caller went on before the answer was heard: their turn continues',
                      })),
                    ],
                  },
                  // Some of the answer is released for the line: speech now is over the agent, and
                  // stops it only as over its audio (the barge-in rule: not its echo, not a noise the
                  // rule does not count), judged at its start and each window while it goes on.
                  BARGE_IN['speech.start'],
                ],
                'speech.onset': BARGE_IN['speech.onset'],
              },
            },
            speaking: {
              // The answer is heard: keys pressed in its turn are answered.
              entry: assign({ keyed: '' }),
              on: { 'reply.done': 'listening', ...BARGE_IN },
            },
            resuming: {
              entry: { type: 'resumeSentence', params: ({ context }) => ({ text: context.resume }) },
              on: { 'reply.audio': 'speaking', 'reply.done': 'listening', ...BARGE_IN },
            },
            // Quiet at once; what the speech meant is decided when it ends (words.final, by the
            // session's rule: src/voice/interruption.ts), or as soon as it runs past a backchannel's length.
            interrupted: {
              entry: [assign({ interrupted: true, resume: '', why: 'the caller spoke over the agent: it stopped' }), 'stopAgent'],
              initial: 'deciding',
              states: {
                deciding: {
                  on: {
                    'speech.start': { guard: { type: 'pastBackchannel', params: ({ event }) => event.spokenMs }, target: 'taken' },
                    'speech.onset': { guard: { type: 'pastBackchannel', params: ({ event }) => event.spokenMs }, target: 'taken' },
                  },
                },
                taken: { entry: assign(({ context }) => ({ taken: true, why: `the caller spoke over the agent past a backchannel's ${context.backchannelMaxMs} ms: the turn is theirs` })) },
              },
              on: {
                ...VENDOR_TURN.interrupted,
                'agent.stopped': { actions: assign(({ event }) => ({ resume: event.unheard })) },
                'speech.pause': { target: 'maybeDone', actions: assign(({ event }) => fromPause(event)) },
                'reply.audio': 'speaking',
              },
            },
          },
        },
        call: {
          initial: 'open',
          states: {
            open: {
              after: { callLimit: { actions: { type: 'endCall', params: { reason: 'timeLimit', why: 'the call reached its length limit' } } } },
              on: {
                'call.close': {
                  target: 'closing',
                  actions: assign(({ event }) => ({
                    why: event.why,
                    ending: { goodbye: event.goodbye, hangup: event.hangup, ...(event.error === undefined ? {} : { error: event.error }) },
                    goodbyeMs: event.goodbye ? event.goodbye.length * GOODBYE_MS_PER_CHAR + GOODBYE_GRACE_MS : 0,
                  })),
                },
              },
            },
            // The first reason to end wins; one that cannot wait (the speech engine failed) only
            // cuts the goodbye short.
            closing: {
              entry: { type: 'sayGoodbye', params: ({ context }) => context.ending! },
              after: { goodbyeGrace: { actions: { type: 'hangUp', params: ({ context }) => context.ending! } } },
              on: { 'call.close': { guard: ({ event }) => event.goodbye === null, actions: { type: 'hangUp', params: ({ context }) => context.ending! } } },
            },
          },
        },
        keypad: {
          initial: 'idle',
          on: {
            'digits.done': [
              { guard: ({ context }) => context.digits === '', target: '.idle' },
              // Said and keyed in one breath ("my account number is" 1234#): the keys wait for the words.
              {
                guard: or([stateIn({ live: { turn: 'callerSpeaking' } }), stateIn({ live: { turn: 'maybeDone' } })]),
                target: '.idle',
                actions: assign(({ context }) => ({ keyed: context.keyed + context.digits, digits: '' })),
              },
              { target: '.idle', actions: [{ type: 'answerDigits', params: ({ context }) => ({ digits: context.digits }) }, assign({ digits: '' })] },
            ],
          },
          states: {
            idle: {
              on: {
                dtmf: [
                  { guard: and(['lineServed', 'endsKeys']), actions: [assign(({ event }) => ({ digits: event.digit })), raise({ type: 'digits.done' })] },
                  { guard: 'lineServed', target: 'collecting', actions: assign(({ event }) => ({ digits: event.digit })) },
                ],
              },
            },
            collecting: {
              after: { dtmfGap: { actions: raise({ type: 'digits.done' }) } },
              on: {
                dtmf: [
                  { guard: 'endsKeys', actions: [assign(({ context, event }) => ({ digits: context.digits + event.digit })), raise({ type: 'digits.done' })] },
                  { target: 'collecting', reenter: true, actions: assign(({ context, event }) => ({ digits: context.digits + event.digit })) },
                ],
              },
            },
          },
        },
        answer: ANSWER_REGION,
        // Speech over the agent that did not stop it (a line no agent serves): once it has really
        // ended, its words are let go so they do not open the caller's next turn. Judged on the
        // audio, not the clock: while the VAD has not yet judged the audio up to the end of the
        // gap, the caller may have gone on in it.
        overlap: {
          initial: 'none',
          states: {
            none: {
              on: {
                'speech.pause': {
                  guard: or(['lineUnavailable', ...AGENT_TALKING.map((s) => stateIn({ live: { turn: s } }))]),
                  target: 'settling',
                  actions: assign(({ event }) => ({ overlapUntil: event.at + OVERLAP_END_MS, overlapWaitMs: Math.max(0, event.at + OVERLAP_END_MS - event.now) })),
                },
              },
            },
            settling: {
              initial: 'waiting',
              after: { vadCatchUp: { target: 'none', actions: ['letGo', assign(({ context }) => talkedOver(context))] } },
              on: { 'speech.start': 'none' },
              states: {
                waiting: { after: { overlapEnd: 'judging' } },
                judging: {
                  always: {
                    guard: { type: 'audioJudged', params: ({ context }) => ({ at: context.overlapUntil }) },
                    target: '#voiceTurn.live.overlap.none',
                    actions: ['letGo', assign(({ context }) => talkedOver(context))],
                  },
                  after: { vadRecheck: { target: 'judging', reenter: true } },
                },
              },
            },
          },
        },
      },
    },
    ended: { type: 'final' },
  },
})

/** The turn's state (what the console app shows) of a snapshot's value. */
export function turnState(value: unknown): VoiceTurnState {
  if (value === 'ended') return 'ended'
  const turn = (value as { live: { turn: VoiceTurnState | Partial<Record<VoiceTurnState, unknown>> } }).live.turn
  // A state with its own steps (maybeDone's wait, then its check on the VAD) is named by the state.
  return typeof turn === 'string' ? turn : ((Object.keys(turn ?? {})[0] as VoiceTurnState | undefined) ?? 'ended')
}
