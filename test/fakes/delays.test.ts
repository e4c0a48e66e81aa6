/** The vendor fakes' latency options (the benchmark's vendor profile) and the OpenAI fake's default reply. */
import { afterAll, describe, expect, test } from 'bun:test'
import WebSocket from 'ws'
import { chunks } from '../support/body'
import { until } from '../support/until'
import { startDeepgramFake } from './deepgram'
import { startOpenAIFake } from './openai'
import { REALISTIC_OPTIONS } from './realistic-delays'
import { startSpeechFake } from './speech-vendors'

const KEY = 'sk-delays-123456'
const openai = startOpenAIFake({ apiKey: KEY, defaultReply: 'Sure, I can help with that.', ...REALISTIC_OPTIONS.openai })
const plain = startOpenAIFake({ apiKey: KEY })
const speech = startSpeechFake(KEY, REALISTIC_OPTIONS.elevenlabs)
const deepgram = startDeepgramFake(KEY, REALISTIC_OPTIONS.deepgram)
afterAll(async () => {
  await Promise.all([openai.stop(), plain.stop()])
  speech.stop()
  deepgram.stop()
})

/** Each chunk of a streamed body with the ms since the request. */
async function timedChunks(res: Response, started: number): Promise<{ ms: number; bytes: Uint8Array }[]> {
  const out: { ms: number; bytes: Uint8Array }[] = []
  for await (const bytes of chunks(res)) out.push({ ms: performance.now() - started, bytes })
  return out
}

describe('OpenAI fake', () => {
  test('with nothing scripted, streams the default reply a word a chunk, after the first-token delay and paced after it', async () => {
    const started = performance.now()
    const res = await fetch(`${openai.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [] }),
    })
    const got = await timedChunks(res, started)
    const text = new TextDecoder().decode(Buffer.concat(got.map((c) => c.bytes)))
    const words = [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]!).choices?.[0]?.delta?.content).filter(Boolean)
    expect(words).toEqual(['Sure,', ' I', ' can', ' help', ' with', ' that.'])
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    expect(got[0]!.ms).toBeGreaterThanOrEqual(REALISTIC_OPTIONS.openai.firstTokenMs - 5)
    // Role chunk, six words, the stop chunk and [DONE], each a token's time after the one before.
    expect(got.at(-1)!.ms - got[0]!.ms).toBeGreaterThanOrEqual(8 * REALISTIC_OPTIONS.openai.tokenMs - 10)
  })

  test('without a default reply, nothing scripted is still a 500', async () => {
    const res = await fetch(`${plain.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [] }),
    })
    expect(res.status).toBe(500)
  })
})

describe('ElevenLabs fake', () => {
  test('first audio after the delay, then 100 ms chunks ten times faster than they play', async () => {
    const started = performance.now()
    const res = await fetch(`${speech.url}/v1/text-to-speech/voice-1/stream?output_format=pcm_16000`, {
      method: 'POST',
      headers: { 'xi-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello there, how are you today?' }),
    })
    const got = await timedChunks(res, started)
    expect(got[0]!.ms).toBeGreaterThanOrEqual(REALISTIC_OPTIONS.elevenlabs.firstAudioMs - 5)
    // 31 characters at 60 ms each: 1.86 s of 16 kHz audio in 3200-byte chunks.
    expect(got.slice(0, -1).every((c) => c.bytes.length === 3200)).toBe(true)
    expect(got.reduce((n, c) => n + c.bytes.length, 0)).toBe(1860 * 32)
    const spread = got.at(-1)!.ms - got[0]!.ms
    expect(spread).toBeGreaterThanOrEqual((got.length - 1) * 10 - 10)
    expect(spread).toBeLessThan(1860)
  })
})

describe('Deepgram fake', () => {
  test('interims leave at once; a final leaves finalDelayMs after its audio', async () => {
    const ws = new WebSocket(`${deepgram.url}/v1/listen?encoding=linear16&sample_rate=16000&channels=1&interim_results=true&endpointing=300`, { headers: { Authorization: `Token ${KEY}` } })
    const got: { ms: number; m: any }[] = []
    await new Promise((r) => ws.on('open', r))
    deepgram.utterances.push('hello there')
    const started = performance.now()
    ws.on('message', (d) => got.push({ ms: performance.now() - started, m: JSON.parse(String(d)) }))
    const pcm = Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)))
    ws.send(Buffer.concat([Buffer.from(pcm.buffer), Buffer.alloc(16_000)]))
    await until(
      'the speech_final',
      async () => got,
      (g) => g.some((x) => x.m.speech_final),
      5_000,
    )
    ws.close()
    const interim = got.find((g) => g.m.is_final === false)!
    const final = got.find((g) => g.m.speech_final)!
    // The interim came first, without the final's wait (a load can only delay the final further).
    expect(got.indexOf(interim)).toBeLessThan(got.indexOf(final))
    expect(final.ms).toBeGreaterThanOrEqual(REALISTIC_OPTIONS.deepgram.finalDelayMs - 5)
    expect(final.m.channel.alternatives[0].transcript).toBe('hello there')
  })
})
