/** ElevenLabs and OpenAI speech adapters, and OpenAI transcription, against local fakes of their HTTP APIs. */
import { afterAll, describe, expect, test } from 'bun:test'
import { OpenAiTranscription } from '../../../src/providers/stt/openai'
import { ElevenLabsTts, elevenLabsVoices } from '../../../src/providers/tts/elevenlabs'
import { OpenAiSpeech } from '../../../src/providers/tts/openai'
import { SpeechError } from '../../../src/voice/ports/stt'
import { startSpeechFake } from '../../fakes/speech-vendors'

const KEY = 'sk-speech-secret-5678'
const fake = startSpeechFake(KEY)
afterAll(() => fake.stop())

async function collect(it: AsyncIterable<Int16Array>): Promise<{ samples: number; chunks: number }> {
  let samples = 0
  let chunks = 0
  for await (const c of it) {
    samples += c.length
    chunks++
  }
  return { samples, chunks }
}

describe('ElevenLabs streaming', () => {
  test('request exactly as documented; PCM streams in chunks, no sample split', async () => {
    const tts = new ElevenLabsTts({ apiKey: KEY, baseUrl: fake.url })
    const got = await collect(tts.synthesize('Hello there.', { voice: 'aria', language: 'en' }))
    const req = fake.requests.at(-1)!
    expect(req.path).toBe('/v1/text-to-speech/9BWtsMINqrJLrRacOk9x/stream?output_format=pcm_16000')
    expect(req.body).toEqual({ text: 'Hello there.', model_id: 'eleven_flash_v2_5' })
    expect(got.samples).toBe(Math.round(('Hello there.'.length * 60 * 16_000) / 1000))
    expect(got.chunks).toBeGreaterThan(1)
  })

  test("an agent's speed goes as voice_settings.speed; none is sent at the voice's own rate", async () => {
    const tts = new ElevenLabsTts({ apiKey: KEY, baseUrl: fake.url })
    await collect(tts.synthesize('Hello there.', { voice: 'aria', language: 'en', speed: 1.15 }))
    expect(fake.requests.at(-1)!.body).toEqual({ text: 'Hello there.', model_id: 'eleven_flash_v2_5', voice_settings: { speed: 1.15 } })
    await collect(tts.synthesize('Hello there.', { voice: 'aria', language: 'en', speed: null }))
    expect(fake.requests.at(-1)!.body).toEqual({ text: 'Hello there.', model_id: 'eleven_flash_v2_5' })
  })

  test('abort stops it; a bad key is a SpeechError without the key', async () => {
    const controller = new AbortController()
    const tts = new ElevenLabsTts({ apiKey: KEY, baseUrl: fake.url })
    const it = tts.synthesize('A long sentence to be cut off part way through.', { voice: 'aria', language: 'en', signal: controller.signal })[Symbol.asyncIterator]()
    await it.next()
    controller.abort()
    expect(await it.next().catch((e) => e.name)).toBe('AbortError')
    const err = await collect(new ElevenLabsTts({ apiKey: 'el-wrong-0000', baseUrl: fake.url }).synthesize('x', { voice: 'aria', language: 'en' })).catch((e) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect(err.message).toBe('401: Invalid API key')
  })

  test('voices list', async () => {
    expect(await elevenLabsVoices(KEY, fake.url)).toEqual([
      { id: '9BWtsMINqrJLrRacOk9x', name: 'Aria' },
      { id: 'JBFqnCBsd6RMkjVDRZzb', name: 'George' },
    ])
  })
})

describe('OpenAI speech and transcription', () => {
  test('/audio/speech with response_format pcm at 24 kHz', async () => {
    const tts = new OpenAiSpeech({ apiKey: KEY, baseUrl: `${fake.url}/v1` })
    expect(tts.sampleRate).toBe(24_000)
    const got = await collect(tts.synthesize('Hi.', { voice: 'oliver', language: 'en' }))
    expect(fake.requests.at(-1)!.body).toEqual({ model: 'gpt-4o-mini-tts', input: 'Hi.', voice: 'fable', response_format: 'pcm' })
    expect(got.samples).toBe(Math.round((3 * 60 * 24_000) / 1000))
  })

  test("an agent's speed goes as `speed`", async () => {
    const tts = new OpenAiSpeech({ apiKey: KEY, baseUrl: `${fake.url}/v1` })
    await collect(tts.synthesize('Hi.', { voice: 'oliver', language: 'en', speed: 0.8 }))
    expect(fake.requests.at(-1)!.body).toEqual({ model: 'gpt-4o-mini-tts', input: 'Hi.', voice: 'fable', response_format: 'pcm', speed: 0.8 })
  })

  test('/audio/transcriptions gets a WAV with model and language; text back; bad key refused', async () => {
    const stt = new OpenAiTranscription({ apiKey: KEY, baseUrl: `${fake.url}/v1` })
    const session = await stt.open({ language: 'en-GB' })
    session.push(new Int16Array(8000))
    expect(await session.finalize()).toBe('hello there')
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o-mini-transcribe', language: 'en', response_format: 'json', riff: 'RIFF', bytes: 44 + 16_000, name: 'audio.wav' })
    // Under 100 ms: nothing to transcribe, no request.
    const count = fake.requests.length
    session.push(new Int16Array(800))
    expect(await session.finalize()).toBe('')
    expect(fake.requests.length).toBe(count)
    const bad = await await new OpenAiTranscription({ apiKey: 'sk-wrong', baseUrl: `${fake.url}/v1` }).open({ language: 'en' })
    bad.push(new Int16Array(8000))
    const err = await bad.finalize().catch((e) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect(err.message).toBe('401: Incorrect API key provided.')
  })
})
