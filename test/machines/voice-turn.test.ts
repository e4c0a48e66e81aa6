/**
 * The voice-turn chart's turn-taking alone, on XState's SimulatedClock, its effects recorded:
 * every decision (end of turn, barge-in, resume, answer, withdraw) and the end-of-turn wait with
 * the VAD's catch-up, row by row: from where, on what, after how long → where, with which effects.
 * The call's waits, the keypad and the overlap: voice-turn-call.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { TURN_JUDGED_SLACK_MS, VAD_CATCH_UP_MS, type VoiceTurnEvent } from '../../machines/voice-turn'
import { chart, final, interruptedThenThinking, judged, listening, pause, START } from './voice-turn-harness'

describe('the voice-turn chart: the turn', () => {
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

  test('thinking: the words lost (the engine at capacity refused them) → listening, the agent asks again; the call goes on', () => {
    const c = listening()
    c.send(START, pause(0, 0))
    c.advance(200)
    c.effects()
    c.send({ type: 'words.lost', why: 'every speech decoder is busy' })
    expect(c.state()).toBe('listening')
    expect(c.effects()).toEqual(['cancelPreempt', 'askRepeat'])
    expect(c.context().why).toBe("the caller's words were lost (every speech decoder is busy): the agent asks again")
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
})
