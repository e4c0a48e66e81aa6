/**
 * The voice-turn chart's call-wide regions alone, on XState's SimulatedClock: caller silence, the
 * call's length and its goodbye grace, the keypad's digit gap, speech over the agent settling
 * (with the VAD's catch-up), and the end of the call. The turn itself: voice-turn.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { DTMF_GAP_MS, GOODBYE_GRACE_MS, GOODBYE_MS_PER_CHAR, OVERLAP_END_MS, VAD_CATCH_UP_MS } from '../../machines/voice-turn'
import { chart, final, listening, pause, START } from './voice-turn-harness'

describe('the voice-turn chart: the call, the keypad, the overlap', () => {
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

  test('call.end ends everything: no wait fires after it', () => {
    const c = listening({ silenceMs: 1_000, callLimitMs: 2_000 })
    c.send({ type: 'dtmf', digit: '1' }, { type: 'call.end' })
    expect(c.value()).toBe('ended')
    c.advance(10_000)
    expect(c.effects()).toEqual([])
  })
})
