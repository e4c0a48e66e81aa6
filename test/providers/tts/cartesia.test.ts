/** Cartesia's WebSocket text-to-speech adapter against a local fake of its API (test/fakes/cartesia.ts). */
import { afterAll, describe, expect, test } from 'bun:test'
import { mulaw } from 'alawmulaw'
import { CARTESIA_MODELS, KeyRejected, offeredModels, offeredVoices, previewVoice, VendorUnavailable } from '../../../src/providers/catalog'
import { CartesiaTts, DEFAULT_VOICE } from '../../../src/providers/tts/cartesia'
import { SpeechError } from '../../../src/voice/ports/stt'
import type { WordTiming } from '../../../src/voice/ports/tts'
import { startCartesiaFake } from '../../fakes/cartesia'
import { REALISTIC, REALISTIC_OPTIONS } from '../../fakes/realistic-delays'
import { until } from '../../support/until'

const KEY = 'sk_car_secret_1234'
const fake = startCartesiaFake(KEY)
afterAll(() => fake.stop())

const tts = (o: { apiKey?: string } = {}) => new CartesiaTts({ apiKey: o.apiKey ?? KEY, baseUrl: fake.url })

async function collect(it: AsyncIterable<Int16Array>): Promise<Int16Array[]> {
  const out: Int16Array[] = []
  for await (const c of it) out.push(c)
  return out
}
const samples = (chunks: Int16Array[]) => chunks.reduce((n, c) => n + c.length, 0)
/** A turn's `ended` and the function that ends it. */
function turnOf(id: string) {
  let end = () => {}
  return { turn: { id, ended: new Promise<void>((r) => (end = r)) }, end: () => end() }
}

describe('Cartesia over its WebSocket', () => {
  test('a turn is one context: sentences with continue and a flush each, the end with continue: false', async () => {
    const engine = tts()
    const upgrades = fake.upgrades.length
    const { turn, end } = turnOf('t1')
    const first = await collect(engine.synthesize('Hello there.', { voice: 'aria', language: 'en-US', turn }))
    const second = await collect(engine.synthesize('How are you?', { voice: 'aria', language: 'en-US', turn }))
    end()
    const mine = () => fake.requests.filter((r) => r.context_id?.startsWith('t1-'))
    await until('the turn is closed with continue: false', mine, (r) => r.some((m) => m.continue === false))
    const sent = mine()
    expect(new Set(sent.map((m) => m.context_id)).size).toBe(1)
    expect(sent.map((m) => [m.transcript, m.continue, m.flush ?? false])).toEqual([
      ['Hello there. ', true, false],
      ['', true, true],
      ['How are you? ', true, false],
      ['', true, true],
      ['', false, false],
    ])
    expect(sent[0]).toMatchObject({
      model_id: 'sonic-3',
      voice: { mode: 'id', id: DEFAULT_VOICE },
      language: 'en',
      output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
      add_timestamps: true,
    })
    // 60 ms a character, 40 ms between words, at 8 kHz: each sentence's own audio, no more.
    expect(samples(first)).toBe(8 * (5 * 60 + 40 + 6 * 60 + 40))
    expect(samples(second)).toBe(8 * (3 * 60 + 40 + 3 * 60 + 40 + 4 * 60 + 40))
    expect(fake.upgrades.at(-1)!.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'cartesia-version': expect.any(String) })
    // The next turn goes on the same socket.
    await collect(engine.synthesize('Again.', { voice: 'aria', language: 'en', turn: turnOf('t1b').turn }))
    expect(fake.upgrades.length).toBe(upgrades + 1)
    engine.close()
  })

  test('mu-law from Cartesia reaches the line as the same bytes', async () => {
    const chunks = await collect(tts().synthesize('Hi.', { voice: DEFAULT_VOICE, language: 'en' }))
    const pcm = Int16Array.from(chunks.flatMap((c) => [...c]))
    const bytes = mulaw.encode(pcm)
    expect([...mulaw.decode(bytes)]).toEqual([...pcm])
    expect(fake.requests.at(-1)).toMatchObject({ transcript: 'Hi.', continue: false, voice: { id: DEFAULT_VOICE } })
  })

  test('word timestamps are reported per sentence, from the start of its own audio', async () => {
    const engine = tts()
    const { turn, end } = turnOf('t2')
    await collect(engine.synthesize('One two.', { voice: 'aria', language: 'en', turn }))
    const words: WordTiming[] = []
    await collect(engine.synthesize('Three four.', { voice: 'aria', language: 'en', turn, onWords: (w) => words.push(...w) }))
    end()
    expect(words.map((w) => w.word)).toEqual(['Three', 'four.'])
    expect(words[0]!.start).toBeCloseTo(0, 6)
    expect(words[0]!.end).toBeCloseTo(0.3, 6)
    expect(words[1]!.start).toBeCloseTo(0.34, 6)
    expect(words[1]!.end).toBeCloseTo(0.64, 6)
    engine.close()
  })

  test('barge-in cancels the context: no more audio for it, and the next turn hears only its own', async () => {
    const slow = startCartesiaFake(KEY, { chunkMs: 20, speedup: 2 })
    try {
      const engine = new CartesiaTts({ apiKey: KEY, baseUrl: slow.url })
      const controller = new AbortController()
      const { turn } = turnOf('cut')
      const it = engine.synthesize('A long sentence that the caller talks over before it ends.', { voice: 'aria', language: 'en', turn, signal: controller.signal })[Symbol.asyncIterator]()
      await it.next()
      controller.abort()
      expect(await it.next().catch((e) => e.name)).toBe('AbortError')
      await until(
        'the fake has the cancel',
        () => slow.cancelled,
        (c) => c.some((id) => id.startsWith('cut-')),
      )
      const cut = slow.cancelled.find((id) => id.startsWith('cut-'))!
      expect(slow.requests.filter((r) => r.context_id === cut).at(-1)).toEqual({ context_id: cut, cancel: true })
      const sentAtCancel = slow.chunks[cut]!
      const next = turnOf('next')
      const audio = await collect(engine.synthesize('Yes.', { voice: 'aria', language: 'en', turn: next.turn }))
      expect(samples(audio)).toBe(8 * (4 * 60 + 40))
      expect(slow.chunks[cut]).toBe(sentAtCancel)
      engine.close()
    } finally {
      slow.stop()
    }
  })

  test('a refused key fails with the vendor reason and without the key', async () => {
    const err = await collect(tts({ apiKey: 'sk_car_wrong_0000' }).synthesize('Hi.', { voice: 'aria', language: 'en' })).catch((e) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect(err.message).toContain('401: Invalid API key')
    expect(err.message).not.toContain('sk_car_wrong_0000')
  })

  test('a rate limit fails the request: at the upgrade, and on a context past the plan', async () => {
    fake.busy = true
    try {
      const err = await collect(tts().synthesize('Hi.', { voice: 'aria', language: 'en' })).catch((e) => e)
      expect(err).toBeInstanceOf(SpeechError)
      expect(err.message).toContain('429: concurrency limit reached')
    } finally {
      fake.busy = false
    }
    fake.maxContexts = 0
    try {
      const err = await collect(tts().synthesize('Hi.', { voice: 'aria', language: 'en' })).catch((e) => e)
      expect(err.message).toContain('429: too many concurrent contexts for your plan')
    } finally {
      fake.maxContexts = undefined
    }
  })

  test('an error message mid-stream fails the sentence after its audio so far; the socket serves the next turn', async () => {
    const engine = tts()
    fake.failAfterChunks = 3
    const got: Int16Array[] = []
    const err = await (async () => {
      for await (const c of engine.synthesize('This sentence fails part way.', { voice: 'aria', language: 'en', turn: turnOf('fail').turn })) got.push(c)
    })().catch((e) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect(err.message).toBe('500: the generation failed')
    expect(got.length).toBe(3)
    expect(samples(await collect(engine.synthesize('Fine.', { voice: 'aria', language: 'en' })))).toBeGreaterThan(0)
    engine.close()
  })
})

test('the socket closing mid-stream fails the sentence; the next one reconnects', async () => {
  const engine = tts()
  fake.dropAfterChunks = 2
  const upgrades = fake.upgrades.length
  const err = await collect(engine.synthesize('This sentence loses its socket.', { voice: 'aria', language: 'en', turn: turnOf('drop').turn })).catch((e) => e)
  expect(err).toBeInstanceOf(SpeechError)
  expect(err.message).toBe('the connection closed')
  expect(samples(await collect(engine.synthesize('Back.', { voice: 'aria', language: 'en' })))).toBeGreaterThan(0)
  expect(fake.upgrades.length).toBe(upgrades + 2)
  engine.close()
})

test("the realistic options hold the first chunk back by Cartesia's declared first-audio time", async () => {
  const realistic = startCartesiaFake(KEY, REALISTIC_OPTIONS.cartesia)
  try {
    const engine = new CartesiaTts({ apiKey: KEY, baseUrl: realistic.url })
    await collect(engine.synthesize('Warm.', { voice: 'aria', language: 'en' }))
    const started = performance.now()
    const it = engine.synthesize('Hello.', { voice: 'aria', language: 'en' })[Symbol.asyncIterator]()
    await it.next()
    expect(performance.now() - started).toBeGreaterThanOrEqual(REALISTIC.cartesiaFirstAudioMs - 1)
    await it.return?.()
    engine.close()
  } finally {
    realistic.stop()
  }
})

describe('Cartesia for BYOK', () => {
  const e = { cartesiaBaseUrl: fake.url }
  test('a key is verified on GET /voices; models are the documented ones; voices page through', async () => {
    expect(await offeredModels('tts', 'cartesia', { apiKey: KEY }, e)).toEqual([...CARTESIA_MODELS])
    fake.voices.push(...Array.from({ length: 150 }, (_, i) => ({ id: `v-${i}`, name: `Voice ${i}` })))
    try {
      const voices = await offeredVoices('cartesia', { apiKey: KEY }, e)
      expect(voices.length).toBe(152)
      expect(voices[0]).toEqual({ id: DEFAULT_VOICE, name: 'Katie', sample: null })
    } finally {
      fake.voices.splice(2)
    }
    const rejected = await offeredModels('tts', 'cartesia', { apiKey: 'sk_car_wrong_0000' }, e).catch((x) => x)
    expect(rejected).toBeInstanceOf(KeyRejected)
    fake.busy = true
    try {
      expect(await offeredVoices('cartesia', { apiKey: KEY }, e).catch((x) => x)).toBeInstanceOf(VendorUnavailable)
    } finally {
      fake.busy = false
    }
  })

  test('a preview is a WAV from POST /tts/bytes', async () => {
    const clip = await previewVoice('cartesia', { apiKey: KEY }, e, DEFAULT_VOICE, 'Hello.', null)
    expect(clip.contentType).toBe('audio/wav')
    expect(new TextDecoder().decode(clip.audio.slice(0, 4))).toBe('RIFF')
  })
})
