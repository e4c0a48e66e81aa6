/**
 * Turn-taking in the voice session, stepped on a simulated clock (no timing is asserted): the chart's
 * states in order for one turn; a complete question answered after the short wait and a trailing
 * "and…" not; an early reply released when the final transcript matches, and a cancelled one
 * never reaching the line, the transcript or the conversation.
 */
import { describe, expect, test } from 'bun:test'
import { SimulatedClock } from 'xstate'
import { COMPLETE_WAIT_MS, TRAILING_WAIT_MS } from '../../src/media/end-of-turn'
import type { OutboundFrame } from '../../src/media/frames'
import { type CallLine, VoiceSession } from '../../src/media/session'
import type { VoiceActivity } from '../../src/media/vad'
import type { SttPartial, SttSession } from '../../src/providers/stt/port'
import type { TextToSpeech } from '../../src/providers/tts/port'

const FRAME_MS = 20
const SPEECH = new Int16Array(160).fill(3000)
const SILENCE = new Int16Array(160)

/** Frames in each push to the VAD, and a stall of the VAD while `vadStalled` is pending. */
const vadPushes: number[] = []
let vadStalled: Promise<void> | null = null
/** A VAD that calls a frame speech when it is loud: one 20 ms window per frame (a push may hold several). */
const vad: VoiceActivity = {
  name: 'energy',
  push: async (pcm) => {
    vadPushes.push(pcm.length / 160)
    if (vadStalled) await vadStalled
    return Array.from({ length: pcm.length / 160 }, (_, i) => ({ speech: pcm[i * 160] !== 0, ms: FRAME_MS, end: (i + 1) * 160 }))
  },
  reset() {},
}
const tts: TextToSpeech = {
  name: 'instant',
  sampleRate: 8000,
  async *synthesize(text) {
    yield new Int16Array(text.length * 8).fill(500)
  },
}

function harness() {
  const clock = new SimulatedClock()
  const states: string[] = []
  const customer: string[] = []
  const agent: string[] = []
  const asked: { text: string; held: boolean }[] = []
  const written: string[] = []
  const frames: OutboundFrame[] = []
  let partial: ((p: SttPartial) => void) | null = null
  // A streaming engine: finalize answers the words said since the last finalize.
  let pending = ''
  let finalized = 0
  const stt: SttSession = {
    sampleRate: 8000,
    push() {},
    finalize: async () => {
      finalized++
      const words = pending
      pending = ''
      return words
    },
    onPartial: (l) => {
      partial = l
    },
    close: async () => {},
  }
  let session: VoiceSession
  const line: CallLine = {
    callId: 'c1',
    opening: '',
    voice: 'aria',
    language: 'en',
    maxCallSeconds: 600,
    respond: async (text, onText, signal, release) => {
      asked.push({ text, held: !!release })
      onText('We open at eight on Sundays. ')
      // The engine's contract: nothing is written before release; an aborted turn writes nothing.
      if (release) await Promise.race([release, new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))])
      if (signal.aborted) throw new Error('aborted')
      written.push(text)
      return { reply: 'We open at eight on Sundays.', endCall: false, messageId: null }
    },
    agentSaid: async (text) => void (text && agent.push(text)),
    customerSaid: async (text) => void customer.push(text),
    latency: () => {},
    state: (s) => void (states.at(-1) !== s && states.push(s)),
    hangUp: async () => {},
    log: () => {},
  }
  // The line plays at once and echoes each mark.
  const send = (f: OutboundFrame) => {
    frames.push(f)
    if (f.kind === 'mark') queueMicrotask(() => session.frame({ kind: 'mark', name: f.name }))
    return true
  }
  session = new VoiceSession({ line, vad, stt, tts, send, chunkMs: 20, now: () => clock.now(), actor: { clock } })
  const settle = () => new Promise((r) => setTimeout(r, 30))
  return {
    session,
    clock,
    states,
    customer,
    agent,
    asked,
    written,
    frames,
    finalized: () => finalized,
    /** The caller speaks `ms` of audio, new words the engine hears as `heard` and finalises as `finalText`. */
    async speak(ms: number, heard: string, finalText = heard) {
      pending = [pending, finalText].filter(Boolean).join(' ')
      for (let t = 0; t < ms; t += FRAME_MS) {
        session.frame({ kind: 'audio', pcm: SPEECH, sampleRate: 8000, chunk: 0, timestamp: 0 })
        // Each frame is heard before the clock moves on, as on a real line.
        await Bun.sleep(1)
        clock.increment(FRAME_MS)
      }
      partial?.({ text: heard, stable: true, endOfSpeech: false })
      await settle()
    },
    /** Silence for `ms`, stepped a frame at a time. */
    async silence(ms: number) {
      for (let t = 0; t < ms; t += FRAME_MS) {
        session.frame({ kind: 'audio', pcm: SILENCE, sampleRate: 8000, chunk: 0, timestamp: 0 })
        await Bun.sleep(1)
        clock.increment(FRAME_MS)
      }
      await settle()
    },
    settle,
  }
}

async function opened() {
  const h = harness()
  h.session.start(8000)
  await h.settle()
  await h.settle()
  expect(h.session.state).toBe('listening')
  return h
}

describe('turn-taking', () => {
  test('audio that waited for a stalled VAD is judged in one push, each frame at the time it arrived', async () => {
    const h = await opened()
    let resume = () => {}
    vadStalled = new Promise<void>((r) => {
      resume = r
    })
    vadPushes.length = 0
    const spokeAt = h.clock.now()
    await h.speak(400, 'What time do you open on Sunday?')
    await h.silence(100)
    vadStalled = null
    resume()
    await h.settle()
    // The first frame went alone and stalled; the 24 that came meanwhile went together.
    expect(vadPushes).toEqual([1, 24])
    expect(h.states).toEqual(['opening', 'listening', 'callerSpeaking', 'maybeDone'])
    // The pause is when the last speech frame arrived, not when the VAD got to it.
    expect(h.session.chart.getSnapshot().context.pausedAt).toBe(spokeAt + 380)
  })

  test("the chart's states in order for one turn", async () => {
    const h = await opened()
    await h.speak(400, 'What time do you open on Sunday?')
    await h.silence(COMPLETE_WAIT_MS + 60)
    await h.settle()
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
    expect(h.asked).toEqual([{ text: 'I want to book a table and', held: false }])
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
    await h.silence(COMPLETE_WAIT_MS + 60)
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
})
