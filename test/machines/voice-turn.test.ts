/**
 * The voice-turn chart alone, on XState's SimulatedClock, its effects recorded: every decision
 * (end of turn, barge-in, resume, answer, let go, end of call) and every wait (end of turn,
 * caller silence, call length, digit gap, overlap settling with the VAD's catch-up, goodbye grace),
 * row by row: from where, on what, after how long → where, with which effects.
 */
import { describe, expect, test } from 'bun:test'
import { createActor, SimulatedClock } from 'xstate'
import {
  DTMF_GAP_MS,
  GOODBYE_GRACE_MS,
  GOODBYE_MS_PER_CHAR,
  OVERLAP_END_MS,
  TURN_JUDGED_SLACK_MS,
  turnState,
  VAD_CATCH_UP_MS,
  type VoiceTurnEvent,
  type VoiceTurnInput,
  voiceTurnMachine,
} from '../../machines/voice-turn'

const EFFECTS = ['preempt', 'cancelPreempt', 'commitTurn', 'answer', 'withdrawAnswer', 'stopAgent', 'resumeSentence', 'letGo', 'answerDigits', 'endCall', 'sayGoodbye', 'hangUp'] as const
const INPUT: VoiceTurnInput = { callLimitMs: 600_000, silenceMs: 30_000, unavailable: false }

/** `answerUnheard`: the session's word on whether the answer made has reached the line (by default, only its final words count). */
function chart(input: Partial<VoiceTurnInput> = {}, audioJudged: boolean | ((at: number) => boolean) = true, answerUnheard?: () => boolean) {
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

/** Speech start the barge-in rule takes as meant: 64 ms of the caller's own voice, as loud as the agent (the rule's rows: test/media/barge-in-onset.test.ts). */
const START: VoiceTurnEvent = {
  type: 'speech.start',
  onset: [
    { ms: 32, overAgentDb: 0 },
    { ms: 32, overAgentDb: 0 },
  ],
}
const judged = (text: string, waitMs: number, shape = 'complete') => ({ text, waitMs, why: `rule for "${text}"`, shape })
const pause = (at: number, now: number, text = 'What time do you open?', waitMs = 200): VoiceTurnEvent => ({ type: 'speech.pause', at, now, ...judged(text, waitMs) })
const final = (text: string, backchannel = false): VoiceTurnEvent => ({ type: 'words.final', text, backchannel, endpointedAt: 0, sttFinalAt: 0 })

/** A chart listening (the opening played). */
function listening(input: Partial<VoiceTurnInput> = {}, audioJudged = true) {
  const c = chart(input, audioJudged)
  c.send({ type: 'reply.done' })
  c.effects()
  return c
}

/** A chart whose agent was cut off in its opening, `resume` left unheard, now waiting for the turn's final words. */
function interruptedThenThinking(resume: string) {
  const c = chart()
  c.send(START, { type: 'agent.stopped', unheard: resume }, pause(0, 0, 'mhm', 100))
  c.advance(100)
  expect(c.state()).toBe('thinking')
  c.effects()
  return c
}

describe('the voice-turn chart', () => {
  test('opening → listening when it has played; the caller speaking over it stops it (barge-in)', () => {
    const c = chart()
    expect(c.state()).toBe('opening')
    c.send(START)
    expect(c.state()).toBe('interrupted')
    expect(c.effects()).toEqual(['stopAgent'])
    expect(c.context().why).toBe('the caller spoke over the agent: it stopped')
    c.send({ type: 'agent.stopped', unheard: 'the rest of it.' })
    expect(c.context().resume).toBe('the rest of it.')
  })

  test('on a line no agent serves, speech over it does not stop it, and is let go once it has ended and the VAD has judged it', () => {
    const c = chart({ unavailable: true })
    c.send(START, pause(1_000, 1_100))
    expect(c.state()).toBe('opening')
    expect(c.effects()).toEqual([])
    c.advance(OVERLAP_END_MS - 100 - 1)
    expect(c.effects()).toEqual([])
    c.advance(1)
    expect(c.effects()).toEqual(['letGo'])
  })

  test('the overlap waits for a VAD that has fallen behind, then decides on what it has after VAD_CATCH_UP_MS', () => {
    const c = chart({ unavailable: true }, false)
    c.send(START, pause(0, 0))
    c.advance(OVERLAP_END_MS + VAD_CATCH_UP_MS - 20)
    expect(c.effects()).toEqual([])
    c.advance(20)
    expect(c.effects()).toEqual(['letGo'])
  })

  test('the caller going on during the overlap settle cancels it', () => {
    const c = chart({ unavailable: true })
    c.send(START, pause(0, 0), START)
    c.advance(OVERLAP_END_MS + VAD_CATCH_UP_MS)
    expect(c.effects()).toEqual([])
  })

  test('a turn: callerSpeaking → maybeDone (early reply) → after the rule’s wait, counted from the last speech → thinking (commit)', () => {
    const c = listening()
    c.send(START)
    expect(c.state()).toBe('callerSpeaking')
    c.send({ type: 'transcript', now: 0, ...judged('What time', 1_500, 'trailing') })
    expect(c.effects()).toEqual(['preempt {"text":"What time","shape":"trailing"}'])
    // Judged 50 ms after the last speech: 150 ms of the 200 ms wait are left.
    c.send(pause(1_000, 1_050))
    expect(c.state()).toBe('maybeDone')
    expect(c.context().why).toBe('rule for "What time do you open?"')
    expect(c.effects()).toEqual(['preempt {"text":"What time do you open?","shape":"complete"}'])
    c.advance(149)
    expect(c.state()).toBe('maybeDone')
    c.advance(1)
    expect(c.state()).toBe('thinking')
    expect(c.effects()).toEqual(['commitTurn'])
  })

  test('maybeDone: the wait ends only once the VAD has judged the audio up to it; speech it then finds takes the turn back', () => {
    let judgedUpTo = 1_000
    const c = chart({}, (at) => judgedUpTo >= at)
    c.send({ type: 'reply.done' })
    c.send(START, pause(1_000, 1_000))
    c.effects()
    // The 200 ms wait is over on the clock, but the VAD has judged nothing after the pause.
    c.advance(200 + 3 * 20)
    expect(c.state()).toBe('maybeDone')
    expect(c.effects()).toEqual([])
    // It catches up and finds the caller went on: no turn was committed.
    judgedUpTo = 1_150
    c.advance(20)
    c.send(START)
    expect(c.state()).toBe('callerSpeaking')
    expect(c.effects()).toEqual(['cancelPreempt'])
    // The next pause: the VAD keeps up, to within one batch in flight.
    c.send(pause(2_000, 2_000))
    c.effects()
    judgedUpTo = 2_200 - TURN_JUDGED_SLACK_MS
    c.advance(200)
    expect(c.state()).toBe('thinking')
    expect(c.effects()).toEqual(['commitTurn'])
  })

  test('maybeDone: a VAD that never catches up is waited for VAD_CATCH_UP_MS, then the turn ends on what was judged', () => {
    const c = chart({}, () => false)
    c.send({ type: 'reply.done' })
    c.send(START, pause(1_000, 1_000))
    c.effects()
    c.advance(200)
    c.advance(VAD_CATCH_UP_MS - 20)
    expect(c.state()).toBe('maybeDone')
    c.advance(20)
    expect(c.state()).toBe('thinking')
    expect(c.effects()).toEqual(['commitTurn'])
  })

  test('maybeDone: the caller goes on (early reply cancelled); new words re-judge the wait without starting it over', () => {
    const c = listening()
    c.send(START, pause(0, 0, 'I want to book', 500))
    c.send(START)
    expect(c.state()).toBe('callerSpeaking')
    expect(c.effects()).toContain('cancelPreempt')
    c.send(pause(1_000, 1_000, 'I want to book and', 1_500))
    c.advance(300)
    c.send({ type: 'transcript', now: 1_300, ...judged('I want to book a table.', 400) })
    c.advance(99)
    expect(c.state()).toBe('maybeDone')
    c.advance(1)
    expect(c.state()).toBe('thinking')
  })

  test('thinking: final words are answered', () => {
    const c = listening()
    c.send(START, pause(0, 0))
    c.advance(200)
    c.effects()
    c.send(final('What time do you open?'))
    expect(c.effects()).toEqual(['answer {"text":"What time do you open?","keys":"","speechEndAt":0,"endpointedAt":0,"sttFinalAt":0}'])
    c.send({ type: 'reply.audio' })
    expect(c.state()).toBe('speaking')
    c.send({ type: 'reply.done' })
    expect(c.state()).toBe('listening')
  })

  test('thinking: an "okay" that was not said over the agent is answered like any turn', () => {
    const c = listening()
    c.send(START, pause(0, 0, 'okay', 200))
    c.advance(200)
    c.effects()
    c.send(final('okay', true))
    expect(c.effects()[0]).toStartWith('answer')
  })

  test('thinking: no words at all → listening, nothing answered', () => {
    const c = listening()
    c.send(START, pause(0, 0, '', 500))
    c.advance(500)
    c.effects()
    c.send(final(''))
    expect(c.state()).toBe('listening')
    expect(c.effects()).toEqual(['cancelPreempt'])
    expect(c.context().why).toBe('no words: nothing to answer')
  })

  test('a backchannel that stopped the agent → resuming: the rest of what it meant to say', () => {
    const c = interruptedThenThinking('which will arrive between nine and eleven.')
    c.send(final('mhm', true))
    expect(c.state()).toBe('resuming')
    expect(c.effects()).toEqual(['cancelPreempt', 'resumeSentence {"text":"which will arrive between nine and eleven."}'])
    expect(c.context().why).toBe('"mhm" was a backchannel: the agent resumes its sentence')
    c.send({ type: 'reply.audio' })
    expect(c.state()).toBe('speaking')
  })

  test('noise (no words) that stopped the agent → resuming', () => {
    const c = interruptedThenThinking('the rest.')
    c.send(final(''))
    expect(c.state()).toBe('resuming')
    expect(c.context().why).toBe('noise, not words, stopped the agent: it resumes its sentence')
  })

  test('a backchannel after the agent had nothing left to say → listening', () => {
    const c = interruptedThenThinking('')
    c.send(final('okay', true))
    expect(c.state()).toBe('listening')
    expect(c.effects()).toEqual(['cancelPreempt'])
  })

  test('a real interruption is answered', () => {
    const c = interruptedThenThinking('the rest.')
    c.send(final('Sorry, can I ask something?'))
    expect(c.state()).toBe('thinking')
    expect(c.effects()[0]).toStartWith('answer')
  })

  test('speech over the agent stops it while it thinks, speaks or resumes', () => {
    for (const reach of [
      (c: ReturnType<typeof chart>) => c.send(final('Hi there.')),
      (c: ReturnType<typeof chart>) => c.send(final('Hi.'), { type: 'reply.audio' }),
      (c: ReturnType<typeof chart>) => c.send(final('mhm', true)),
    ]) {
      const c = interruptedThenThinking('the rest.')
      reach(c)
      c.effects()
      c.send(START)
      expect(c.state()).toBe('interrupted')
      expect(c.effects()).toEqual(['stopAgent'])
    }
  })

  test('caller silence while listening ends the call; a key pressed starts the wait over', () => {
    const c = listening({ silenceMs: 1_000 })
    c.advance(900)
    c.send({ type: 'dtmf', digit: '5' })
    c.advance(999)
    expect(c.effects()).not.toContain('endCall {"reason":"silence","why":"the caller said nothing for the silence timeout"}')
    c.advance(1)
    expect(c.effects()).toContain('endCall {"reason":"silence","why":"the caller said nothing for the silence timeout"}')
  })

  test('the call length limit ends the call; its goodbye has a grace, then the chart hangs up; the first reason wins', () => {
    const c = chart({ callLimitMs: 5_000 })
    c.advance(4_999)
    expect(c.effects()).toEqual([])
    c.advance(1)
    expect(c.effects()).toEqual(['endCall {"reason":"timeLimit","why":"the call reached its length limit"}'])
    const goodbye = 'Time is up. Goodbye.'
    c.send({ type: 'call.close', goodbye, hangup: 'answered', why: 'the call reached its length limit' })
    expect(c.effects()).toEqual([`sayGoodbye {"goodbye":"${goodbye}","hangup":"answered"}`])
    c.send({ type: 'call.close', goodbye: 'Other.', hangup: 'answered', why: 'another' })
    expect(c.context().why).toBe('the call reached its length limit')
    c.advance(goodbye.length * GOODBYE_MS_PER_CHAR + GOODBYE_GRACE_MS - 1)
    expect(c.effects()).toEqual([])
    c.advance(1)
    expect(c.effects()).toEqual([`hangUp {"goodbye":"${goodbye}","hangup":"answered"}`])
  })

  test('while saying goodbye, a reason that cannot wait hangs up at once with the first reason', () => {
    const c = chart()
    c.send({ type: 'call.close', goodbye: 'Bye.', hangup: 'answered', why: 'shutting down' })
    c.effects()
    c.send({ type: 'call.close', goodbye: null, hangup: 'failed', error: 'text-to-speech failed', why: 'text-to-speech failed' })
    expect(c.effects()).toEqual(['hangUp {"goodbye":"Bye.","hangup":"answered"}'])
  })

  test('keypad digits are answered after the digit gap, or at `digits.done`; a line no agent serves ignores them', () => {
    const c = listening()
    c.send({ type: 'dtmf', digit: '1' })
    c.advance(DTMF_GAP_MS - 1)
    c.send({ type: 'dtmf', digit: '2' })
    c.advance(DTMF_GAP_MS - 1)
    expect(c.effects()).toEqual([])
    c.advance(1)
    expect(c.effects()).toEqual(['answerDigits {"digits":"12"}'])
    c.send({ type: 'dtmf', digit: '9' }, { type: 'digits.done' })
    expect(c.effects()).toEqual(['answerDigits {"digits":"9"}'])
    const u = chart({ unavailable: true })
    u.send({ type: 'dtmf', digit: '1' })
    u.advance(DTMF_GAP_MS)
    expect(u.effects()).toEqual([])
  })

  test('# ends a key sequence at once; keys pressed while the caller speaks join that turn, answered with its words', () => {
    const c = listening()
    c.send({ type: 'dtmf', digit: '7' }, { type: 'dtmf', digit: '#' })
    expect(c.effects()).toEqual(['answerDigits {"digits":"7#"}'])
    c.send({ type: 'dtmf', digit: '#' })
    expect(c.effects()).toEqual(['answerDigits {"digits":"#"}'])
    const s = listening()
    s.send(START, { type: 'dtmf', digit: '9' }, { type: 'dtmf', digit: '1' }, { type: 'dtmf', digit: '#' })
    expect(s.context().keyed).toBe('91#')
    s.send(pause(0, 0, 'my account number is', 500))
    s.advance(500)
    s.effects()
    // Even words that would be nothing to answer on their own: the keys are the turn.
    s.send(final(''))
    expect(s.effects()).toEqual(['answer {"text":"","keys":"91#","speechEndAt":0,"endpointedAt":0,"sttFinalAt":0}'])
    // Kept until the answer is heard: a caller who goes on before it keeps them in the turn.
    expect(s.context().keyed).toBe('91#')
    s.send({ type: 'reply.audio' })
    expect(s.context().keyed).toBe('')
  })

  test('thinking: the caller goes on before hearing a word of the answer → the answer is withdrawn, the turn goes on, answered whole', () => {
    let unheard = true
    const c = chart({}, true, () => unheard)
    c.send({ type: 'reply.done' }, START, pause(0, 0, 'What time do you open', 200))
    c.advance(200)
    c.send(final('What time do you open'))
    expect(c.effects()).toEqual([
      'preempt {"text":"What time do you open","shape":"complete"}',
      'commitTurn',
      'answer {"text":"What time do you open","keys":"","speechEndAt":0,"endpointedAt":0,"sttFinalAt":0}',
    ])
    c.send(START)
    expect(c.state()).toBe('callerSpeaking')
    expect(c.effects()).toEqual(['withdrawAnswer'])
    expect(c.context()).toMatchObject({ held: 'What time do you open', why: 'the caller went on before the answer was heard: their turn continues' })
    c.send(pause(900, 900, 'What time do you open on Saturday?', 200))
    c.advance(200)
    c.send(final('on Saturday?'))
    expect(c.effects()).toEqual([
      'preempt {"text":"What time do you open on Saturday?","shape":"complete"}',
      'commitTurn',
      'answer {"text":"What time do you open on Saturday?","keys":"","speechEndAt":900,"endpointedAt":0,"sttFinalAt":0}',
    ])
    expect(c.context().held).toBe('')
    // Once any of it is on the line, speech is over the agent: it stops.
    unheard = false
    c.send(START)
    expect(c.state()).toBe('interrupted')
    expect(c.effects()).toEqual(['stopAgent'])
  })

  test("thinking: an earlier pause's final words, come after the turn was ended again → kept for the turn; its own final answers them all", () => {
    const c = listening()
    c.send(START, pause(0, 0, 'What time do you open', 200))
    c.advance(200)
    c.send(START, pause(900, 900, 'on Saturday?', 200))
    c.advance(200)
    expect(c.state()).toBe('thinking')
    c.effects()
    c.send({ ...final('What time do you open'), earlier: true } as VoiceTurnEvent)
    expect(c.effects()).toEqual([])
    expect(c.context().held).toBe('What time do you open')
    c.send(final('on Saturday?'))
    expect(c.effects()).toEqual(['answer {"text":"What time do you open on Saturday?","keys":"","speechEndAt":900,"endpointedAt":0,"sttFinalAt":0}'])
  })

  test('thinking, the answer released for the line: only speech the barge-in rule counts stops it, judged at its start and each window after', () => {
    const c = chart({}, true, () => false)
    c.send({ type: 'reply.done' }, START, pause(0, 0, 'What time do you open?', 200))
    c.advance(200)
    c.send(final('What time do you open?'))
    c.effects()
    // The agent's own audio coming back, 20 dB under what it played: not the caller's.
    const echo = { ms: 32, overAgentDb: -20 }
    c.send({ type: 'speech.start', onset: [echo, echo] }, { type: 'speech.onset', onset: [echo, echo, echo] })
    expect(c.state()).toBe('thinking')
    expect(c.effects()).toEqual([])
    // The caller's own voice over it, 64 ms of it: stopped.
    c.send({ type: 'speech.onset', onset: [echo, echo, echo, { ms: 32, overAgentDb: 0 }, { ms: 32, overAgentDb: 0 }] })
    expect(c.state()).toBe('interrupted')
    expect(c.effects()).toEqual(['stopAgent'])
  })

  test('thinking: the caller goes on before the final words come → they are kept for the turn, not lost; noise after them still answers them', () => {
    const c = listening()
    c.send(START, pause(0, 0, 'I need to book', 200))
    c.advance(200)
    c.effects()
    c.send(START)
    expect(c.state()).toBe('callerSpeaking')
    // No answer was made yet: the session has nothing to withdraw.
    expect(c.effects()).toEqual(['withdrawAnswer'])
    c.send(final('I need to book'))
    expect(c.context().held).toBe('I need to book')
    c.send(pause(700, 700, 'I need to book', 500))
    c.advance(500)
    // The going-on was a cough: no words, but the turn has words to answer.
    c.send(final(''))
    expect(c.effects().filter((e) => e.startsWith('answer'))).toEqual(['answer {"text":"I need to book","keys":"","speechEndAt":700,"endpointedAt":0,"sttFinalAt":0}'])
  })

  test('call.end ends everything: no wait fires after it', () => {
    const c = listening({ silenceMs: 1_000, callLimitMs: 2_000 })
    c.send({ type: 'dtmf', digit: '1' }, { type: 'call.end' })
    expect(c.value()).toBe('ended')
    c.advance(10_000)
    expect(c.effects()).toEqual([])
  })
})
