/** The Deepgram Flux adapter against a local fake of Flux's `/v2/listen` protocol (test/fakes/deepgram-flux.ts), over a real socket. */
import { afterAll, describe, expect, test } from 'bun:test'
import { DeepgramFluxStt, type FluxSettings, fluxSettingsError } from '../../../src/providers/stt/deepgram-flux'
import { SpeechError, type SttPartial, type SttSession, type SttTurnEvent } from '../../../src/voice/ports/stt'
import { startFluxFake } from '../../fakes/deepgram-flux'
import { until } from '../../support/until'

const KEY = 'dg-flux-secret-5678'
const fake = startFluxFake(KEY)
const limited = startFluxFake(KEY, { maxStreams: 1 })
afterAll(() => {
  fake.stop()
  limited.stop()
})

const RATE = 16_000
const speech = (ms: number) => Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)))
const silence = (ms: number) => new Int16Array((RATE * ms) / 1000)
const push = (session: SttSession, pcm: Int16Array) => {
  for (let at = 0; at < pcm.length; at += 320) session.push(pcm.subarray(at, at + 320))
}

async function open(url: string, settings: FluxSettings = {}, apiKey = KEY) {
  const session = await new DeepgramFluxStt({ apiKey, baseUrl: url, ...settings }).open({ language: 'en' })
  const turns: SttTurnEvent[] = []
  const partials: SttPartial[] = []
  session.onTurn!((e) => turns.push(e))
  session.onPartial!((p) => partials.push(p))
  return { session, turns, partials }
}

describe('Deepgram Flux', () => {
  test('opens /v2/listen with the model, encoding, rate and end-of-turn settings; declares it judges turns', async () => {
    const { session } = await open(fake.url, { eotThreshold: 0.8, eagerEotThreshold: 0.5, eotTimeoutMs: 3000 })
    expect(session.capabilities).toMatchObject({ streaming: true, endOfTurn: true, eagerEndOfTurn: true })
    push(session, speech(100))
    await until(
      'the stream',
      () => fake.streams.length,
      (n) => n > 0,
    )
    expect(fake.streams.at(-1)).toEqual({ model: 'flux-general-en', encoding: 'linear16', sample_rate: '16000', eot_threshold: '0.8', eager_eot_threshold: '0.5', eot_timeout_ms: '3000' })
    await session.close()
    await until(
      'CloseStream',
      () => fake.controls.at(-1),
      (c) => c === 'CloseStream',
    )
  })

  test('μ-law at 8 kHz: a quarter of the bytes, the same turn', async () => {
    fake.utterances.push('Yes please.')
    const session = await new DeepgramFluxStt({ apiKey: KEY, baseUrl: fake.url, encoding: 'mulaw' }).open({ language: 'en' })
    const turns: SttTurnEvent[] = []
    session.onTurn!((e) => turns.push(e))
    expect(session.sampleRate).toBe(8_000)
    const tone = Int16Array.from({ length: 8 * 400 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8_000)))
    for (let at = 0; at < tone.length; at += 160) session.push(tone.subarray(at, at + 160))
    for (let at = 0; at < 8 * 400; at += 160) session.push(new Int16Array(160))
    await until(
      'the end of turn',
      () => turns.at(-1),
      (t) => t?.type === 'end',
    )
    expect(fake.streams.at(-1)).toMatchObject({ encoding: 'mulaw', sample_rate: '8000' })
    expect(turns.at(-1)).toMatchObject({ type: 'end', text: 'Yes please.' })
    await session.close()
  })

  test('with no eager threshold it declares no eager end', async () => {
    const { session } = await open(fake.url)
    expect(session.capabilities.eagerEndOfTurn).toBe(false)
    await session.close()
  })

  test('a turn: start, updates, eager end, end; finalize answers the end of turn text', async () => {
    fake.utterances.push('What time do you open on Sunday?')
    const { session, turns, partials } = await open(fake.url, { eagerEotThreshold: 0.5 })
    push(session, speech(600))
    push(session, silence(400))
    await until(
      'the end of turn',
      () => turns.map((t) => t.type),
      (t) => t.includes('end'),
    )
    expect(turns).toEqual([
      { type: 'start' },
      { type: 'eager-end', text: 'What time do you open on Sunday?', confidence: 0.55 },
      { type: 'end', text: 'What time do you open on Sunday?', confidence: 0.85 },
    ])
    expect(partials.at(-1)).toEqual({ text: 'What time do you open on Sunday?', stable: true, endOfSpeech: true })
    expect(await session.finalize()).toBe('What time do you open on Sunday?')
    expect(await session.finalize()).toBe('')
    await session.close()
  })

  test("an end not taken before the next turn starts is not that turn's words", async () => {
    fake.utterances.push('Mhm.', 'Can I ask something?')
    const { session, turns } = await open(fake.url)
    push(session, speech(300))
    push(session, silence(400))
    push(session, speech(300))
    await until(
      'the second start of turn',
      () => turns.filter((t) => t.type === 'start').length,
      (n) => n === 2,
    )
    // Asked mid-turn (the chart's backstop): the words of this turn so far, not the end let go before it.
    expect(await session.finalize()).toBe('Can I ask something?')
    push(session, silence(400))
    await until(
      'the second end of turn',
      () => turns.filter((t) => t.type === 'end').length,
      (n) => n === 2,
    )
    expect(await session.finalize()).toBe('Can I ask something?')
    await session.close()
  })

  test('speech after an eager end: the turn resumes, and its end holds the whole turn', async () => {
    fake.utterances.push({ text: 'I would like to book', ends: false }, 'a table for two')
    const { session, turns } = await open(fake.url, { eagerEotThreshold: 0.5, eotTimeoutMs: 2000 })
    push(session, speech(400))
    push(session, silence(300))
    push(session, speech(400))
    push(session, silence(400))
    await until(
      'the end of turn',
      () => turns.map((t) => t.type),
      (t) => t.includes('end'),
    )
    expect(turns.map((t) => t.type)).toEqual(['start', 'eager-end', 'resumed', 'eager-end', 'end'])
    expect(turns.at(-1)).toMatchObject({ text: 'I would like to book a table for two' })
    await session.close()
  })

  test('a refused key fails the session with the reason, the key never in it', async () => {
    const { session, turns } = await open(fake.url, {}, 'dg-wrong-key-0000')
    const err = await until(
      'the refusal',
      () =>
        session.finalize().then(
          () => null,
          (e: unknown) => e,
        ),
      (e) => e !== null,
    )
    expect(err).toBeInstanceOf(SpeechError)
    expect((err as Error).message).toBe('Deepgram refused the Flux stream: HTTP 401 (the API key was rejected)')
    expect((err as Error).message).not.toContain('dg-wrong-key')
    expect(turns).toEqual([{ type: 'end', text: '' }])
    await session.close()
  })

  test('a rate limit (429 at the upgrade) fails the session with the reason', async () => {
    const first = await open(limited.url)
    push(first.session, speech(40))
    await until(
      'the first stream',
      () => limited.open,
      (n) => n === 1,
    )
    const second = await open(limited.url)
    const err = await until(
      'the refusal',
      () =>
        second.session.finalize().then(
          () => null,
          (e: unknown) => e,
        ),
      (e) => e !== null,
    )
    expect((err as Error).message).toBe('Deepgram refused the Flux stream: HTTP 429 (rate limited: too many streams at once)')
    await first.session.close()
    await second.session.close()
  })

  test('Flux failing mid-stream: its Error fails the session with its description, and a turn in progress ends', async () => {
    fake.utterances.push('Can I change my')
    const { session, turns } = await open(fake.url)
    push(session, speech(300))
    await until(
      'the start of turn',
      () => turns.length,
      (n) => n > 0,
    )
    fake.failStreams('the model crashed')
    const err = await until(
      'the failure',
      () =>
        session.finalize().then(
          () => null,
          (e: unknown) => e,
        ),
      (e) => e !== null,
    )
    expect((err as Error).message).toBe('Deepgram Flux: the model crashed (INTERNAL_SERVER_ERROR)')
    expect(turns.at(-1)).toEqual({ type: 'end', text: '' })
    await session.close()
  })

  test('settings out of the documented ranges are refused, naming the field', async () => {
    expect(fluxSettingsError({ eotThreshold: 0.95 })).toBe('eotThreshold must be between 0.5 and 0.9')
    expect(fluxSettingsError({ eagerEotThreshold: 0.2 })).toBe('eagerEotThreshold must be between 0.3 and 0.9')
    expect(fluxSettingsError({ eotTimeoutMs: 20_000 })).toBe('eotTimeoutMs must be between 500 and 10000')
    expect(fluxSettingsError({ eotThreshold: 0.6, eagerEotThreshold: 0.8 })).toBe('eagerEotThreshold must not be above eotThreshold (0.6)')
    expect(fluxSettingsError({ eotThreshold: 0.7, eagerEotThreshold: 0.4, eotTimeoutMs: 3000 })).toBeNull()
    await expect(new DeepgramFluxStt({ apiKey: KEY, baseUrl: fake.url, eotThreshold: 2 }).open({ language: 'en' })).rejects.toThrow('Deepgram Flux settings: eotThreshold must be between 0.5 and 0.9')
  })
})
