/**
 * The Realtime call engine (providers/realtime/openai.ts, media/realtime-session.ts) against a
 * local fake of OpenAI's Realtime WebSocket protocol (test/fakes/openai-realtime.ts), over a real
 * socket. The line is played by the test: it takes the session's frames and echoes marks when it
 * is told the caller heard them, as Twilio does.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { encodeMulaw, PHONE_RATE } from '../../../src/media/codecs'
import type { OutboundFrame } from '../../../src/media/frames'
import { keypadTones } from '../../../src/media/keypad'
import { VOICE_LINES } from '../../../src/media/phrases'
import { type RealtimeLine, RealtimeSession, type RealtimeToolOutcome } from '../../../src/media/realtime-session'
import { EnergyVad } from '../../../src/media/vad'
import { RealtimeConnection, RealtimeError, type RealtimeOptions } from '../../../src/providers/realtime/openai'
import { startRealtimeFake } from '../../fakes/openai-realtime'
import { until } from '../../support/until'

const KEY = 'sk-realtime-test-key-RRRR5555'
const fake = startRealtimeFake({ apiKey: KEY, models: ['gpt-realtime'], wordMs: 300, speedup: 20 })
afterAll(() => fake.stop())

const OPTIONS: RealtimeOptions = {
  apiKey: KEY,
  baseUrl: fake.baseUrl,
  model: 'gpt-realtime',
  voice: 'marin',
  instructions: 'You are a test agent.',
  tools: [{ name: 'end_call', description: 'Hang up.', parameters: { type: 'object', properties: {} } }],
  turnDetection: 'server_vad',
}

/** 20 ms frames of a 440 Hz tone (speech to the fake's VAD) or silence, at the phone's rate. */
const tone = (ms: number) => Int16Array.from({ length: (PHONE_RATE * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / PHONE_RATE)))
const silence = (ms: number) => new Int16Array((PHONE_RATE * ms) / 1000)

/** A line the test plays: what the session sent, and marks echoed on demand. */
class TestLine {
  readonly frames: OutboundFrame[] = []
  private echoed = 0
  constructor(private session: () => RealtimeSession) {}
  send = (f: OutboundFrame) => {
    this.frames.push(f)
    return true
  }
  get marks(): string[] {
    return this.frames.flatMap((f) => (f.kind === 'mark' ? [f.name] : []))
  }
  /** The caller has heard the first `count` marks' audio (all sent so far when omitted). */
  hear(count = this.marks.length): void {
    for (const name of this.marks.slice(this.echoed, count)) this.session().frame({ kind: 'mark', name })
    this.echoed = Math.max(this.echoed, count)
  }
  /** The caller's audio, in 20 ms frames at the line's pace (Twilio streams in real time). */
  async say(pcm: Int16Array): Promise<void> {
    for (let at = 0; at < pcm.length; at += 160) {
      this.session().frame({ kind: 'audio', pcm: pcm.subarray(at, at + 160), sampleRate: PHONE_RATE, chunk: 0, timestamp: 0 })
      await new Promise((r) => setTimeout(r, 20))
    }
  }
}

/** Our turn detection: the energy VAD, a turn over after this much silence. */
const OUR_WAIT_MS = 600

async function call(opts: Partial<RealtimeOptions> & { silenceMs?: number } = {}, runTool?: (name: string) => RealtimeToolOutcome) {
  const said: { who: string; text: string; usage?: unknown }[] = []
  const hangUps: { hangup: string; error?: string }[] = []
  const tools: string[] = []
  const transfers: string[] = []
  const connection = await RealtimeConnection.open({ ...OPTIONS, ...opts })
  let session!: RealtimeSession
  const line = new TestLine(() => session)
  const callLine: RealtimeLine = {
    callId: 'c1',
    opening: 'Hello there, how can I help you today?',
    maxCallSeconds: 600,
    customerSaid: async (text) => void said.push({ who: 'customer', text }),
    agentSaid: async (text, usage) => void said.push({ who: 'agent', text, usage }),
    runTool: async (name) => {
      tools.push(name)
      return runTool?.(name) ?? { output: { ok: true } }
    },
    state: () => {},
    transfer: async (name) => {
      transfers.push(name)
      return `I'm sorry, I couldn't put you through to ${name} just now.`
    },
    hangUp: async (r) => void hangUps.push(r),
    log: () => {},
  }
  const turns = opts.turnDetection === 'service_vad' ? { vad: new EnergyVad(), waitMs: OUR_WAIT_MS } : undefined
  session = new RealtimeSession({ line: callLine, connection, send: line.send, turns, silenceMs: opts.silenceMs })
  session.start(PHONE_RATE)
  return { session, line, said, hangUps, tools, transfers, log: () => fake.sessions.at(-1)! }
}

describe('OpenAI Realtime', () => {
  test('opens with Bearer auth and configures μ-law both ways, the voice, the tools and the turn detection', async () => {
    const connection = await RealtimeConnection.open({ ...OPTIONS, turnDetection: 'semantic_vad' })
    const log = fake.sessions.at(-1)!
    await until(
      'the session.update',
      () => log.events.find((e) => e.type === 'session.update'),
      (v) => v !== undefined,
    )
    connection.close()
    const update = log.events.find((e) => e.type === 'session.update').session
    expect(log.model).toBe('gpt-realtime')
    expect(update.type).toBe('realtime')
    expect(update.audio.input.format).toEqual({ type: 'audio/pcmu' })
    expect(update.audio.output).toEqual({ format: { type: 'audio/pcmu' }, voice: 'marin' })
    expect(update.audio.input.turn_detection.type).toBe('semantic_vad')
    expect(update.tools).toEqual([{ type: 'function', ...OPTIONS.tools[0] }])
  })

  test('a refused key fails the connect with the API’s reason, the key not in it', async () => {
    const err = await RealtimeConnection.open({ ...OPTIONS, apiKey: 'sk-wrong-key-9999' }).catch((e) => e)
    expect(err).toBeInstanceOf(RealtimeError)
    expect(err.code).toBe('invalid_api_key')
    expect(err.message).toContain('Incorrect API key provided')
    expect(err.message).not.toContain('sk-wrong-key-9999')
  })

  test('a model the key does not reach fails the connect with model_not_found', async () => {
    const err = await RealtimeConnection.open({ ...OPTIONS, model: 'gpt-4o-realtime-preview' }).catch((e) => e)
    expect(err.code).toBe('model_not_found')
  })

  test('the model’s μ-law reaches the line byte for byte, marked every 100 ms; the opening is stored once heard', async () => {
    const c = await call()
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    c.line.hear()
    await until(
      'the opening stored',
      () => c.said,
      (s) => s.length === 1,
    )
    const sent = c.line.frames.flatMap((f) => (f.kind === 'audio' ? [...encodeMulaw(f.pcm)] : []))
    // Eight words at 300 ms: 2.4 s of the fake's tone, as it made it.
    const made = encodeMulaw(tone(2400))
    expect(sent.length).toBe(made.length)
    expect(Buffer.from(sent).equals(Buffer.from(made))).toBe(true)
    expect(c.said[0]).toMatchObject({ who: 'agent', text: 'Hello there, how can I help you today?' })
    expect((c.said[0]!.usage as { outputAudioTokens: number }).outputAudioTokens).toBe(48)
    await c.session.close()
  })

  test('barge-in while the model still speaks: the line is cleared, the response cancelled, the item truncated to what was heard', async () => {
    const slow = startRealtimeFake({ apiKey: KEY, models: ['gpt-realtime'], speedup: 1 })
    try {
      const c = await call({ baseUrl: slow.baseUrl })
      await until(
        'the first audio',
        () => c.line.marks.length,
        (n) => n >= 5,
      )
      c.line.hear(3)
      await c.line.say(tone(100))
      const log = slow.sessions.at(-1)!
      const truncate = await until(
        'the truncate',
        () => log.events.find((e) => e.type === 'conversation.item.truncate'),
        (v) => v !== undefined,
      )
      expect(truncate.audio_end_ms).toBe(300)
      expect(log.events.some((e) => e.type === 'response.cancel')).toBe(true)
      expect(c.line.frames.some((f) => f.kind === 'clear')).toBe(true)
      await c.session.close()
    } finally {
      await slow.stop()
    }
  })

  test('barge-in after the response was made: the line is cleared and the item truncated to what the caller heard, the transcript too', async () => {
    fake.heard.push('wait, stop')
    const c = await call()
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    // The caller heard 1.2 s (12 marks) of the opening, then spoke over it.
    c.line.hear(12)
    await c.line.say(tone(300))
    const log = c.log()
    const truncate = await until(
      'the truncate',
      () => log.events.find((e) => e.type === 'conversation.item.truncate'),
      (v) => v !== undefined,
    )
    expect(truncate.audio_end_ms).toBe(1200)
    expect(truncate.content_index).toBe(0)
    expect(c.line.frames.some((f) => f.kind === 'clear')).toBe(true)
    // Marks Twilio echoes for the cleared audio do not count as heard.
    c.line.hear()
    await c.line.say(silence(700))
    await until(
      'both lines stored',
      () => c.said,
      (s) => s.length >= 2,
    )
    // Half the opening's audio was heard: its first words, cut at a word (whether the response was whole or cancelled when the caller spoke).
    const heard = c.said[0]!.text
    expect(c.said[0]!.who).toBe('agent')
    expect('Hello there, how can I help you today?'.startsWith(heard)).toBe(true)
    expect(heard.split(' ').length).toBeGreaterThanOrEqual(3)
    expect(heard.split(' ').length).toBeLessThanOrEqual(4)
    expect(c.said[1]).toEqual({ who: 'customer', text: 'wait, stop' })
    await c.session.close()
  })

  test('a tool call is run, answered with function_call_output and a new response; end_call hangs up once the goodbye played', async () => {
    fake.heard.push('that is all, bye')
    fake.replies.push({ tool: { name: 'end_call', arguments: { reason: 'done' } } }, { text: 'Goodbye!' })
    const c = await call({}, (name) => ({ output: { ending: true }, endCall: name === 'end_call' }))
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    c.line.hear()
    await c.line.say(tone(400))
    await c.line.say(silence(600))
    const log = c.log()
    const output = await until(
      'the tool’s output',
      () => log.events.find((e) => e.type === 'conversation.item.create' && e.item.type === 'function_call_output'),
      (v) => v !== undefined,
    )
    expect(JSON.parse(output.item.output)).toEqual({ ending: true })
    expect(c.tools).toEqual(['end_call'])
    await until(
      'the goodbye’s audio',
      () => c.line.marks.length,
      (n) => n >= 27,
    )
    expect(c.hangUps).toEqual([])
    c.line.hear()
    await Bun.sleep(1000)
    console.log('DEBUG', c.line.marks.length, c.said, JSON.stringify(log.events.map((e) => e.type)))
    await until(
      'the hang-up',
      () => c.hangUps,
      (h) => h.length === 1,
    )
    expect(c.hangUps[0]).toEqual({ hangup: 'answered' })
    expect(c.said.map((s) => s.text)).toContain('Goodbye!')
  })

  test('our turn detection: the model’s is off; a silence after the caller’s speech commits the buffer and asks for the answer', async () => {
    fake.heard.push('what time is it')
    fake.replies.push({ text: 'It is noon.' })
    const c = await call({ turnDetection: 'service_vad' })
    const log = c.log()
    const update = await until(
      'the session.update',
      () => log.events.find((e) => e.type === 'session.update'),
      (v) => v !== undefined,
    )
    expect(update.session.audio.input.turn_detection).toBeNull()
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    c.line.hear()
    await c.line.say(tone(400))
    expect(log.events.some((e) => e.type === 'input_audio_buffer.commit')).toBe(false)
    await c.line.say(silence(OUR_WAIT_MS + 100))
    const commit = await until(
      'the commit',
      () => log.events.findIndex((e) => e.type === 'input_audio_buffer.commit'),
      (i) => i >= 0,
    )
    expect(log.events[commit + 1]).toEqual({ type: 'response.create' })
    await until(
      'the answer’s audio',
      () => c.line.marks.length,
      (n) => n >= 24 + 9,
    )
    c.line.hear()
    await until(
      'both lines stored',
      () => c.said,
      (s) => s.length === 3,
    )
    expect(c.said.slice(1).map((l) => [l.who, l.text])).toEqual([
      ['customer', 'what time is it'],
      ['agent', 'It is noon.'],
    ])
    await c.session.close()
  })

  test('our turn detection: speech over the model’s audio cancels its response (the model’s VAD is off) and truncates it to what was heard', async () => {
    const slow = startRealtimeFake({ apiKey: KEY, models: ['gpt-realtime'], speedup: 1 })
    try {
      const c = await call({ baseUrl: slow.baseUrl, turnDetection: 'service_vad' })
      await until(
        'the first audio',
        () => c.line.marks.length,
        (n) => n >= 5,
      )
      c.line.hear(4)
      await c.line.say(tone(200))
      const log = slow.sessions.at(-1)!
      const truncate = await until(
        'the truncate',
        () => log.events.find((e) => e.type === 'conversation.item.truncate'),
        (v) => v !== undefined,
      )
      expect(truncate.audio_end_ms).toBe(400)
      expect(log.events.some((e) => e.type === 'response.cancel')).toBe(true)
      await c.session.close()
    } finally {
      await slow.stop()
    }
  })

  test('send_digits: the keys are tones on the line after the words that answer the tool', async () => {
    fake.heard.push('press one for me')
    fake.replies.push({ tool: { name: 'send_digits', arguments: { digits: '1#' } } }, { text: 'Pressing one.' })
    const c = await call({}, () => ({ output: { sent: true }, digits: '1#' }))
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    c.line.hear()
    await c.line.say(tone(400))
    await c.line.say(silence(600))
    const tones = keypadTones('1#').length
    await until(
      'the answer’s audio',
      () => c.line.marks.length,
      (n) => n >= 24 + 6,
    )
    expect(c.line.frames.some((f) => f.kind === 'audio' && f.pcm.length === tones)).toBe(false)
    c.line.hear()
    await until(
      'the tones',
      () => c.line.frames.findIndex((f) => f.kind === 'audio' && f.pcm.length === tones),
      (i) => i >= 0,
    )
    // The tones came after the last mark of the answer.
    const at = c.line.frames.findIndex((f) => f.kind === 'audio' && f.pcm.length === tones)
    expect(c.line.frames.slice(0, at).filter((f) => f.kind === 'mark').length).toBe(30)
    await c.session.close()
  })

  test('transfer_call: the caller is put through once the words that go with it played; a refusal is said', async () => {
    fake.heard.push('can I speak to sales')
    fake.replies.push({ tool: { name: 'transfer_call', arguments: { destination: 'Sales' } } }, { text: 'Connecting you now.' })
    const c = await call({}, () => ({ output: { transferring: true }, transfer: 'Sales' }))
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    c.line.hear()
    await c.line.say(tone(400))
    await c.line.say(silence(600))
    await until(
      'the answer’s audio',
      () => c.line.marks.length,
      (n) => n >= 24 + 9,
    )
    expect(c.transfers).toEqual([])
    c.line.hear()
    await until(
      'the transfer',
      () => c.transfers,
      (t) => t.length === 1,
    )
    expect(c.transfers).toEqual(['Sales'])
    const log = c.log()
    const said = await until(
      'the refusal said',
      () => log.events.find((e) => e.type === 'response.create' && e.response?.instructions?.includes("couldn't put you through to Sales")),
      (v) => v !== undefined,
    )
    expect(said.response.instructions).toContain('Say exactly this')
    await c.session.close()
  })

  test('a caller silent after the agent’s turn hears the silence goodbye, then the call ends', async () => {
    const c = await call({ silenceMs: 300 })
    await until(
      'the opening’s audio',
      () => c.line.marks.length,
      (n) => n >= 24,
    )
    c.line.hear()
    const log = c.log()
    await until(
      'the goodbye asked for',
      () => log.events.filter((e) => e.type === 'response.create').length,
      (n) => n === 2,
    )
    expect(log.events.filter((e) => e.type === 'response.create')[1].response.instructions).toContain(VOICE_LINES.silence)
    // A word is 300 ms of the fake's audio, a mark every 100 ms.
    const goodbyeMarks = VOICE_LINES.silence.split(/\s+/).length * 3
    await until(
      'the goodbye’s audio',
      () => c.line.marks.length,
      (n) => n >= 24 + goodbyeMarks,
    )
    expect(c.hangUps).toEqual([])
    c.line.hear()
    await until(
      'the hang-up',
      () => c.hangUps,
      (h) => h.length === 1,
    )
    expect(c.hangUps[0]).toEqual({ hangup: 'answered' })
  })

  test('a rate limit fails the call with the API’s reason', async () => {
    fake.rateLimited = true
    try {
      const c = await call()
      await until(
        'the hang-up',
        () => c.hangUps,
        (h) => h.length === 1,
      )
      expect(c.hangUps[0]!.hangup).toBe('failed')
      expect(c.hangUps[0]!.error).toContain('Rate limit reached for gpt-realtime')
    } finally {
      fake.rateLimited = false
    }
  })

  test('the API failing mid-response fails the call, naming the close', async () => {
    fake.dropAfterDeltas = 5
    const c = await call()
    await until(
      'the hang-up',
      () => c.hangUps,
      (h) => h.length === 1,
    )
    expect(c.hangUps[0]!.hangup).toBe('failed')
    expect(c.hangUps[0]!.error).toContain('1011')
    expect(c.line.marks.length).toBe(5)
  })
})
