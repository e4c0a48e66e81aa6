/**
 * Turn-taking with an engine that judges turns itself (Deepgram Flux, AssemblyAI v3: capabilities
 * `endOfTurn`), stepped on a simulated clock (test/support/turn-harness.ts): its eager end starts
 * the answer held, its turn resumed withdraws it with no trace, its end releases it (or starts it);
 * the rules' short waits end no turn meanwhile.
 */
import { describe, expect, test } from 'bun:test'
import { HOSTED_WAITS } from '../../src/voice/turn-waits'
import { VENDOR_TURN_BACKSTOP_MS } from '../../src/voice/vendor-turns'
import { flush, turnHarness } from '../support/turn-harness'

const QUESTION = 'What time do you open on Sunday?'

async function opened() {
  const h = turnHarness({ vendorTurns: true })
  h.session.start(8000)
  await flush()
  return h
}

describe('turn-taking on an engine that judges turns', () => {
  test('a pause the rules would end waits for the engine: its end answers, with no early reply', async () => {
    const h = await opened()
    await h.turn({ type: 'start' })
    await h.speak(400, QUESTION)
    // Three times the rules' wait for a complete question: the engine has not ended the turn.
    await h.silence(HOSTED_WAITS.complete * 3)
    expect(h.session.state).toBe('maybeDone')
    expect(h.asked).toEqual([])
    await h.turn({ type: 'end', text: QUESTION })
    await h.silence(100)
    expect(h.asked).toEqual([{ text: QUESTION, held: true }])
    expect(h.customer).toEqual([QUESTION])
    expect(h.agent).toEqual(['We open at eight on Sundays.'])
    await h.session.close()
  })

  test('an eager end prepares the answer held; the end releases that one answer', async () => {
    const h = await opened()
    await h.speak(400, QUESTION)
    await h.silence(100)
    await h.turn({ type: 'eager-end', text: QUESTION })
    // Prepared, not heard: no line written, no audio.
    expect(h.asked).toEqual([{ text: QUESTION, held: true }])
    expect(h.written).toEqual([])
    expect(h.agentAudioMs()).toBe(0)
    await h.silence(100)
    await h.turn({ type: 'end', text: QUESTION })
    await h.silence(100)
    // One model call: the eager one, released.
    expect(h.asked).toEqual([{ text: QUESTION, held: true }])
    expect(h.written).toEqual([QUESTION])
    expect(h.customer).toEqual([QUESTION])
    expect(h.agentAudioMs()).toBeGreaterThan(0)
    await h.session.close()
  })

  test('a turn resumed after an eager end withdraws the answer: nothing played, nothing written; the end answers the whole turn', async () => {
    const h = await opened()
    await h.speak(400, 'I would like to book')
    await h.silence(100)
    await h.turn({ type: 'eager-end', text: 'I would like to book' })
    await h.silence(100)
    await h.turn({ type: 'resumed' })
    await h.speak(400, 'a table for two')
    await h.silence(100)
    expect(h.written).toEqual([])
    expect(h.customer).toEqual([])
    expect(h.agentAudioMs()).toBe(0)
    await h.turn({ type: 'end', text: 'I would like to book a table for two' })
    await h.silence(100)
    expect(h.asked.map((a) => a.text)).toEqual(['I would like to book', 'I would like to book a table for two'])
    expect(h.written).toEqual(['I would like to book a table for two'])
    expect(h.customer).toEqual(['I would like to book a table for two'])
    await h.session.close()
  })

  test('an end that comes before the VAD has called a pause ends the turn', async () => {
    const h = await opened()
    await h.speak(400, QUESTION)
    await h.turn({ type: 'end', text: QUESTION })
    await h.silence(200)
    expect(h.customer).toEqual([QUESTION])
    expect(h.agent).toEqual(['We open at eight on Sundays.'])
    await h.session.close()
  })

  test('an engine gone quiet: the backstop ends the turn on the words so far', async () => {
    const h = await opened()
    await h.speak(400, QUESTION)
    await h.silence(VENDOR_TURN_BACKSTOP_MS - 200)
    expect(h.session.state).toBe('maybeDone')
    await h.silence(400)
    expect(h.session.state).not.toBe('maybeDone')
    await h.session.close()
  })
})
