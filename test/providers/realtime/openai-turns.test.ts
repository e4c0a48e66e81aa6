/**
 * The Realtime call engine's tools (end_call, send_digits, transfer_call as the model's
 * functions), our own turn detection in place of the model's, and the caller's silence, against
 * the local fake of OpenAI's Realtime API (test/fakes/openai-realtime.ts) over a real socket.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { keypadTones } from '../../../src/voice/keypad'
import { VOICE_LINES } from '../../../src/voice/phrases'
import { startRealtimeFake } from '../../fakes/openai-realtime'
import { until } from '../../support/until'
import { harness, KEY, OUR_WAIT_MS, silence, tone } from './helpers'

const fake = startRealtimeFake({ apiKey: KEY, models: ['gpt-realtime'], wordMs: 300, speedup: 20 })
afterAll(() => fake.stop())
const { call } = harness(fake)

describe('OpenAI Realtime: tools, turns, silence', () => {
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
})
