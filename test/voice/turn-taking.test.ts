/**
 * Turn-taking in the voice session, stepped on a simulated clock (no real time passes; the
 * chart's waits and the line's playing run on it, test/support/turn-harness.ts): the chart's
 * states in order for one turn; a complete question answered after the short wait and a trailing
 * "and…" not; an early reply released when the final transcript matches, and a cancelled one
 * never reaching the line, the transcript or the conversation; no turn ended on interim words
 * while their final is due.
 */
import { describe, expect, test } from 'bun:test'
import { TRAILING_WAIT_MS } from '../../src/voice/end-of-turn'
import type { TextToSpeech } from '../../src/voice/ports/tts'
import { HOSTED_WAITS, LOCAL_WAITS } from '../../src/voice/turn-waits'
import { FRAME_MS, flush, turnHarness } from '../support/turn-harness'

/** The harness's engine gives its words at every pause (the hosted profile's waits); with `noTurnCues` it gives none (the local profile's). */
const COMPLETE_WAIT_MS = HOSTED_WAITS.complete
const UNKNOWN_WAIT_MS = LOCAL_WAITS.unknown

/** Frames in each push to the VAD, and a stall of the VAD while `vadStalled` is pending. */
let vadStalled: Promise<void> | null = null

async function opened() {
  const h = turnHarness({ vadStall: () => vadStalled })
  h.session.start(8000)
  await flush()
  expect(h.session.state).toBe('listening')
  return h
}

/**
 * A session whose engine is asked for its words only when the turn ends (pocketsphinx), its
 * decoder slow to answer: finals wait until `unstall` (those asked after `answerAtOnce` do not).
 */
async function slowFinals() {
  let unstall = () => {}
  let stall: Promise<void> | null = new Promise<void>((r) => (unstall = r))
  const h = turnHarness({ finalStall: () => stall, noTurnCues: true })
  h.session.start(8000)
  await flush()
  const answerAtOnce = () => {
    stall = null
  }
  return { h, unstall, answerAtOnce }
}

describe('turn-taking', () => {
  test('audio that waited for a stalled VAD is judged in one push, each frame at the time it arrived', async () => {
    const h = await opened()
    let resume = () => {}
    vadStalled = new Promise<void>((r) => {
      resume = r
    })
    h.vadPushes.length = 0
    const spokeAt = h.clock.now()
    await h.speak(400, 'What time do you open on Sunday?')
    await h.silence(100)
    vadStalled = null
    resume()
    await flush()
    // The first frame went alone and stalled; the 24 that came meanwhile went together.
    expect(h.vadPushes).toEqual([1, 24])
    expect(h.states).toEqual(['opening', 'listening', 'callerSpeaking', 'maybeDone'])
    // The pause is when the last speech frame arrived, not when the VAD got to it.
    expect(h.session.chart.getSnapshot().context.pausedAt).toBe(spokeAt + 380)
  })

  test('with no words at a pause (pocketsphinx), a 700 ms pause inside the turn is waited out: one turn, one line', async () => {
    const h = turnHarness({ noTurnCues: true })
    h.session.start(8000)
    await flush()
    await h.speak(400, '', 'My number is four one five,')
    await h.silence(700)
    expect(h.session.state).toBe('maybeDone')
    expect(h.finalized()).toBe(0)
    await h.speak(400, '', 'five five five.')
    await h.silence(Math.max(LOCAL_WAITS.unknown, LOCAL_WAITS.falling, LOCAL_WAITS.holding) + 60)
    expect(h.finalized()).toBe(1)
    expect(h.customer).toEqual(['My number is four one five, five five five.'])
    await h.session.close()
  })

  test("the chart's states in order for one turn", async () => {
    const h = await opened()
    await h.speak(400, 'What time do you open on Sunday?')
    await h.silence(COMPLETE_WAIT_MS + 60)
    expect(h.states).toEqual(['opening', 'listening', 'callerSpeaking', 'maybeDone', 'thinking', 'speaking', 'listening'])
    await h.session.close()
  })

  test('a complete question ends the turn after the short wait; the early reply is the one heard', async () => {
    const h = await opened()
    await h.speak(400, 'What time do you open on Sunday?')
    await h.silence(COMPLETE_WAIT_MS + 60)
    expect(h.finalized()).toBe(1)
    // Started early (held) on the words heard at the pause, released on the same final words: one model call.
    expect(h.asked).toEqual([{ text: 'What time do you open on Sunday?', held: true }])
    expect(h.customer).toEqual(['What time do you open on Sunday?'])
    expect(h.written).toEqual(['What time do you open on Sunday?'])
    expect(h.agent).toEqual(['We open at eight on Sundays.'])
    await h.session.close()
  })

  test('a trailing "and…" is not ended by the short wait, and gets no early reply; the longer wait ends it', async () => {
    const h = await opened()
    await h.speak(400, 'I want to book a table and')
    await h.silence(COMPLETE_WAIT_MS + 200)
    expect(h.session.state).toBe('maybeDone')
    expect(h.customer).toEqual([])
    expect(h.asked).toEqual([])
    await h.silence(TRAILING_WAIT_MS)
    expect(h.customer).toEqual(['I want to book a table and'])
    // Every answer is held until its first audio is ready (the caller may still go on).
    expect(h.asked).toEqual([{ text: 'I want to book a table and', held: true }])
  })

  test("the call ends after the turn ended, before the answer has audio: the caller's words stay in the transcript, the answer goes", async () => {
    // A speech engine that never makes audio: the answer is never heard.
    const tts: TextToSpeech = {
      name: 'stuck',
      sampleRate: 8000,
      async *synthesize() {
        await new Promise(() => {})
      },
    }
    const h = turnHarness({ tts })
    h.session.start(8000)
    await flush()
    await h.speak(400, 'Thank you.')
    await h.silence(COMPLETE_WAIT_MS + 60)
    expect(h.session.state).toBe('thinking')
    expect(h.customer).toEqual([])
    await h.session.close()
    expect(h.customer).toEqual(['Thank you.'])
    expect(h.written).toEqual([])
    expect(h.agent).toEqual([])
  })

  test("the call ends while the caller's turn is still open (being said, or judged): their words stay in the transcript, nothing is answered", async () => {
    const speaking = await opened()
    await speaking.speak(400, 'My name is Priya')
    expect(speaking.session.state).toBe('callerSpeaking')
    await speaking.session.close()
    expect(speaking.customer).toEqual(['My name is Priya'])

    const judging = await opened()
    await judging.speak(400, 'I want to book a table and')
    await judging.silence(COMPLETE_WAIT_MS + 60)
    expect(judging.session.state).toBe('maybeDone')
    await judging.session.close()
    expect(judging.customer).toEqual(['I want to book a table and'])
    expect(judging.asked.filter((a) => !a.held)).toEqual([])
    expect(judging.written).toEqual([])
  })

  test("the call ends while the turn's final words are on their way: they are stored once they come", async () => {
    const { h, unstall } = await slowFinals()
    await h.speak(400, 'Thank you.')
    await h.silence(UNKNOWN_WAIT_MS + 60)
    expect(h.session.state).toBe('thinking')
    const closed = h.session.close()
    await flush()
    expect(h.customer).toEqual([])
    unstall()
    await closed
    expect(h.customer).toEqual(['Thank you.'])
    expect(h.written).toEqual([])
  })

  test('the caller goes on after the turn ended, before the answer has audio: one turn, one line, one answer; the first never reaches the line or memory', async () => {
    // A speech engine that makes nothing until the test lets it: the answer's first audio is not ready.
    let blocked = true
    let unblock = () => {}
    const tts: TextToSpeech = {
      name: 'slow',
      sampleRate: 8000,
      async *synthesize(text) {
        while (blocked) await new Promise<void>((r) => (unblock = r))
        yield new Int16Array(text.length * 8).fill(500)
      },
    }
    const h = turnHarness({ tts })
    h.session.start(8000)
    await flush()
    await h.speak(400, 'What time do you open')
    // A question with no question mark: its wait.
    await h.silence(HOSTED_WAITS.question + 60)
    expect(h.session.state).toBe('thinking')
    const audioBefore = h.agentAudioMs()
    await h.speak(400, 'on Saturday?')
    expect(h.session.state).toBe('callerSpeaking')
    expect(h.context().held).toBe('What time do you open')
    expect(h.whys).toContain('the caller went on before the answer was heard: their turn continues')
    blocked = false
    unblock()
    await h.silence(COMPLETE_WAIT_MS + 60)
    await h.silence(200)
    expect(h.customer).toEqual(['What time do you open on Saturday?'])
    expect(h.written).toEqual(['What time do you open on Saturday?'])
    expect(h.asked.map((a) => a.text)).toEqual(['What time do you open', 'What time do you open on Saturday?'])
    expect(h.agent).toEqual(['We open at eight on Sundays.'])
    expect(h.agentAudioMs()).toBeGreaterThan(audioBefore)
    await h.session.close()
  })

  test("a noise the barge-in rule does not count (the agent's own echo) while a released answer has no audio yet does not stop it", async () => {
    // The agent's answer opens with a tool call: it is released when the model's first step ends,
    // with nothing to say until the tool is done (the chart stays in `thinking`).
    let toolDone = () => {}
    const tool = new Promise<void>((r) => (toolDone = r))
    const h = turnHarness({
      opening: 'Hello, this is a courtesy call from the delivery team to confirm your parcel for tomorrow morning.',
      msPerChar: 20,
      line: {
        respond: async (_text, onText, signal, release, stepped) => {
          stepped?.()
          await release
          await tool
          if (signal.aborted) throw new Error('aborted')
          onText('It comes on Tuesday. ')
          return { reply: 'It comes on Tuesday.', endCall: false, messageId: null }
        },
      },
    })
    h.session.start(8000)
    await flush()
    await h.silence(400)
    // The caller asks over the opening: it stops; their question is answered.
    await h.speak(100, 'Which day?')
    await h.silence(COMPLETE_WAIT_MS + 40)
    expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
    expect(h.session.state).toBe('thinking')
    expect(h.customer).toEqual(['Which day?'])
    // The tail of the opening comes back from a speakerphone 20 dB under it (the harness's agent
    // audio is 500, its VAD calls any sound speech): the rule's echo row.
    for (let t = 0; t < 120; t += 20) {
      h.session.frame({ kind: 'audio', pcm: new Int16Array(160).fill(50), sampleRate: 8000, chunk: 0, timestamp: 0 })
      await flush()
      h.clock.increment(20)
      await flush()
    }
    expect(h.session.state).toBe('thinking')
    toolDone()
    await h.silence(2_000)
    expect(h.frames.filter((f) => f.kind === 'clear').length).toBe(1)
    expect(h.agent.at(-1)).toBe('It comes on Tuesday.')
    await h.session.close()
  })

  test("a slow engine's final for a pause the caller went on from, coming after the turn ended again, is kept for the turn: one line, one answer", async () => {
    const slow = await slowFinals()
    const { h, unstall } = slow
    await h.speak(400, 'What time do you open')
    await h.silence(UNKNOWN_WAIT_MS + 60)
    expect(h.session.state).toBe('thinking')
    slow.answerAtOnce()
    await h.speak(400, 'on Saturday?')
    expect(h.session.state).toBe('callerSpeaking')
    await h.silence(UNKNOWN_WAIT_MS + 60)
    expect(h.session.state).toBe('thinking')
    expect(h.finalized()).toBe(2)
    // The engine answers only now: the first pause's words, then the rest.
    unstall()
    await h.silence(200)
    expect(h.customer).toEqual(['What time do you open on Saturday?'])
    expect(h.asked.map((a) => a.text).at(-1)).toBe('What time do you open on Saturday?')
    expect(h.written).toEqual(['What time do you open on Saturday?'])
    await h.session.close()
  })

  test('the caller goes on: the early reply is cancelled and nothing of it reaches the line, the transcript or memory', async () => {
    const h = await opened()
    const audioBefore = h.frames.filter((f) => f.kind === 'audio').length
    await h.speak(400, 'Can I book a table for tonight?')
    await h.silence(100)
    // Paused on a complete question: the reply started, held.
    expect(h.asked).toEqual([{ text: 'Can I book a table for tonight?', held: true }])
    // The caller goes on before the wait is over, with more words.
    await h.speak(400, 'For six people.')
    expect(h.frames.filter((f) => f.kind === 'audio').length).toBe(audioBefore)
    expect(h.customer).toEqual([])
    expect(h.written).toEqual([])
    // The turn now ends on a statement's full stop.
    await h.silence(HOSTED_WAITS.statement + 60)
    // The final words differ from the early reply's: a new reply answers them; the cancelled one left nothing.
    expect(h.customer).toEqual(['Can I book a table for tonight? For six people.'])
    expect(h.written).toEqual(['Can I book a table for tonight? For six people.'])
    expect(h.agent).toEqual(['We open at eight on Sundays.'])
    await h.session.close()
  })

  test("a final transcript that differs from the early reply's words is answered afresh", async () => {
    const h = await opened()
    await h.speak(400, 'Is the shop open on Sunday?', 'Is the shop open on Monday?')
    await h.silence(COMPLETE_WAIT_MS + 60)
    expect(h.asked.map((a) => a.text)).toEqual(['Is the shop open on Sunday?', 'Is the shop open on Monday?'])
    expect(h.written).toEqual(['Is the shop open on Monday?'])
    expect(h.customer).toEqual(['Is the shop open on Monday?'])
    await h.session.close()
  })

  test('interim words that read as a whole question do not end the turn while its final is due; the final decides', async () => {
    let answer = () => {}
    let stall: Promise<void> | null = new Promise<void>((r) => (answer = r))
    const h = turnHarness({ finalStall: () => stall })
    h.session.start(8000)
    await flush()
    // "Do you still" reads as a whole question; the engine's final, late, has "have the" too.
    await h.speak(400, 'Do you still', 'Do you still have the', false)
    await h.silence(COMPLETE_WAIT_MS + 100)
    expect(h.session.state).toBe('maybeDone')
    expect(h.context().why).toBe("the engine's final words are still to come")
    stall = null
    answer()
    await flush()
    // The final trails ("the"): the turn waits on, and the caller goes on.
    expect(h.context().shape).toBe('trailing')
    await h.silence(400)
    expect(h.session.state).toBe('maybeDone')
    await h.speak(600, 'green jacket in medium?')
    await h.silence(COMPLETE_WAIT_MS + 60)
    expect(h.customer).toEqual(['Do you still have the green jacket in medium?'])
    expect(h.written).toEqual(['Do you still have the green jacket in medium?'])
    await h.session.close()
  })

  test('a final that comes after the short wait, the same words as the interim ones, ends the turn at once', async () => {
    let answer = () => {}
    let stall: Promise<void> | null = new Promise<void>((r) => (answer = r))
    const h = turnHarness({ finalStall: () => stall })
    h.session.start(8000)
    await flush()
    await h.speak(400, 'What time do you open on Sunday?', 'What time do you open on Sunday?', false)
    await h.silence(COMPLETE_WAIT_MS + 100)
    expect(h.session.state).toBe('maybeDone')
    stall = null
    answer()
    await flush()
    // The wait counts from the caller's last speech: it is over, so the turn ends on the final's next frame.
    await h.silence(FRAME_MS)
    expect(h.session.state).not.toBe('maybeDone')
    await h.silence(100)
    expect(h.customer).toEqual(['What time do you open on Sunday?'])
    await h.session.close()
  })
})
