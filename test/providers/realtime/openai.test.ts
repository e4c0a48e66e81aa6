/**
 * The Realtime call engine (providers/realtime/openai.ts, media/realtime-session.ts) against a
 * local fake of OpenAI's Realtime WebSocket protocol (test/fakes/openai-realtime.ts), over a real
 * socket: the connection, the line's μ-law, barge-in and the API's failures. Tools, our turn
 * detection and the silence timeout: openai-turns.test.ts.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { RealtimeConnection, RealtimeError } from '../../../src/providers/realtime/openai'
import { encodeMulaw } from '../../../src/voice/codecs'
import { startRealtimeFake } from '../../fakes/openai-realtime'
import { until } from '../../support/until'
import { harness, KEY, silence, tone } from './helpers'

const fake = startRealtimeFake({ apiKey: KEY, models: ['gpt-realtime'], wordMs: 300, speedup: 20 })
afterAll(() => fake.stop())
const { OPTIONS, call } = harness(fake)

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
