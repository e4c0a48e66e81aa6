/**
 * The voice-turn chart alone, on XState's SimulatedClock, its effects recorded: the harness of
 * voice-turn.test.ts (the turn) and voice-turn-call.test.ts (the call, the keypad, the overlap).
 */
import { expect } from 'bun:test'
import { createActor, SimulatedClock } from 'xstate'
import { turnState, type VoiceTurnEvent, type VoiceTurnInput, voiceTurnMachine } from '../../machines/voice-turn'

const EFFECTS = ['preempt', 'cancelPreempt', 'commitTurn', 'answer', 'withdrawAnswer', 'stopAgent', 'resumeSentence', 'letGo', 'askRepeat', 'answerDigits', 'endCall', 'sayGoodbye', 'hangUp'] as const
const INPUT: VoiceTurnInput = { callLimitMs: 600_000, silenceMs: 30_000, unavailable: false }

/** `answerUnheard`: the session's word on whether the answer made has reached the line (by default, only its final words count). */
export function chart(input: Partial<VoiceTurnInput> = {}, audioJudged: boolean | ((at: number) => boolean) = true, answerUnheard?: () => boolean) {
  const clock = new SimulatedClock()
  const log: string[] = []
  const record = (name: string) => (_: unknown, params: unknown) => void log.push(params && typeof params === 'object' && Object.keys(params).length ? `${name} ${JSON.stringify(params)}` : name)
  const machine = voiceTurnMachine.provide({
    actions: Object.fromEntries(EFFECTS.map((name) => [name, record(name)])),
    guards: {
      audioJudged: (_, { at }: { at: number }) => (typeof audioJudged === 'function' ? audioJudged(at) : audioJudged),
      ...(answerUnheard ? { answerUnheard: ({ context }) => !context.answering || answerUnheard() } : {}),
    },
  })
  const actor = createActor(machine, { input: { ...INPUT, ...input }, clock })
  actor.start()
  return {
    log,
    send: (...events: VoiceTurnEvent[]) => {
      for (const e of events) actor.send(e)
    },
    advance: (ms: number) => clock.increment(ms),
    now: () => clock.now(),
    state: () => turnState(actor.getSnapshot().value),
    value: () => actor.getSnapshot().value,
    context: () => actor.getSnapshot().context,
    /** Effects run since the last look. */
    effects: () => log.splice(0),
  }
}

/** Speech start the barge-in rule takes as meant: 64 ms of the caller's own voice, as loud as the agent (the rule's rows: test/voice/barge-in-onset.test.ts). */
export const START: VoiceTurnEvent = {
  type: 'speech.start',
  onset: [
    { ms: 32, overAgentDb: 0 },
    { ms: 32, overAgentDb: 0 },
  ],
}
export const judged = (text: string, waitMs: number, shape = 'complete') => ({ text, waitMs, why: `rule for "${text}"`, shape })
export const pause = (at: number, now: number, text = 'What time do you open?', waitMs = 200): VoiceTurnEvent => ({ type: 'speech.pause', at, now, ...judged(text, waitMs) })
export const final = (text: string, backchannel = false): VoiceTurnEvent => ({ type: 'words.final', text, backchannel, endpointedAt: 0, sttFinalAt: 0 })

/** A chart listening (the opening played). */
export function listening(input: Partial<VoiceTurnInput> = {}, audioJudged = true) {
  const c = chart(input, audioJudged)
  c.send({ type: 'reply.done' })
  c.effects()
  return c
}

/** A chart whose agent was cut off in its opening, `resume` left unheard, now waiting for the turn's final words. */
export function interruptedThenThinking(resume: string) {
  const c = chart()
  c.send(START, { type: 'agent.stopped', unheard: resume }, pause(0, 0, 'mhm', 100))
  c.advance(100)
  expect(c.state()).toBe('thinking')
  c.effects()
  return c
}
