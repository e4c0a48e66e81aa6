/** The AssemblyAI adapter against a local fake of Universal-Streaming's v3 WebSocket, over a real socket. */
import { afterAll, describe, expect, test } from 'bun:test'
import { AssemblyAiStt } from '../../../src/providers/stt/assemblyai'
import { type AssemblyAiTurnSettings, SpeechError, type SttPartial, type SttSession, type SttTurnEvent } from '../../../src/voice/ports/stt'
import { startAssemblyAiFake } from '../../fakes/assemblyai'
import { until } from '../../support/until'

const KEY = 'aai-secret-key-1234'
const fake = startAssemblyAiFake(KEY)
const oneSession = startAssemblyAiFake(KEY, { maxSessions: 1 })
const failing = startAssemblyAiFake(KEY, { failAfterMs: 300 })
afterAll(() => {
  for (const f of [fake, oneSession, failing]) f.stop()
})

const RATE = 16_000
/** A 440 Hz tone at a quarter of full scale: speech to the fake's energy rule. */
const speech = (ms: number) => Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)))
const silence = (ms: number) => new Int16Array((RATE * ms) / 1000)
/** Sends audio in 20 ms frames, as the pipeline does (the adapter gathers the 50 ms chunks the vendor takes). */
const push = (session: SttSession, pcm: Int16Array) => {
  for (let at = 0; at < pcm.length; at += 320) session.push(pcm.subarray(at, at + 320))
}
async function open(url: string, assemblyai?: AssemblyAiTurnSettings, key = KEY) {
  const session = await new AssemblyAiStt({ apiKey: key, baseUrl: url }).open({ language: 'en-US', assemblyai })
  const partials: SttPartial[] = []
  const turns: SttTurnEvent[] = []
  session.onPartial!((p) => partials.push(p))
  session.onTurn!((e) => turns.push(e))
  return { session, partials, turns }
}

describe('AssemblyAI Universal-Streaming', () => {
  test('opens with the documented query and key header; declares what it can do; Terminate at the end', async () => {
    const streams = fake.streams.length
    const { session } = await open(fake.url, { endOfTurnConfidence: 0.6, minTurnSilenceMs: 300, maxTurnSilenceMs: 2000 })
    await until(
      'the stream',
      () => fake.streams.length,
      (n) => n > streams,
    )
    expect(session.capabilities).toEqual({ streaming: true, interimWords: true, punctuation: true, endOfTurn: true, eagerEndOfTurn: true, wordTimings: true })
    const before = fake.audioBytes
    push(session, silence(200))
    await until(
      'the audio, in 50 ms chunks',
      () => fake.audioBytes - before,
      (n) => n === 6400,
    )
    await session.close()
    expect(fake.streams.at(-1)).toEqual({
      sample_rate: '16000',
      encoding: 'pcm_s16le',
      speech_model: 'universal-streaming-english',
      format_turns: 'true',
      end_of_turn_confidence_threshold: '0.6',
      min_turn_silence: '300',
      max_turn_silence: '2000',
    })
    await until(
      'Terminate',
      () => fake.controls.at(-1),
      (c) => c === 'Terminate',
    )
    // 20 ms frames sent as they came would have been closed 3007 (chunks under 50 ms).
    expect(fake.closes.filter((c) => c === 3007)).toEqual([])
  })

  test('a language other than English opens the multilingual model', async () => {
    const streams = fake.streams.length
    const session = await new AssemblyAiStt({ apiKey: KEY, baseUrl: fake.url }).open({ language: 'es' })
    await until(
      'the stream',
      () => fake.streams.length,
      (n) => n > streams,
    )
    await session.close()
    expect(fake.streams.at(-1)?.speech_model).toBe('universal-streaming-multilingual')
  })

  test("a turn: 'start' on its first words, partials as they come, an eager end at the pause, 'end' with the formatted text; finalize takes it at once", async () => {
    fake.utterances.push('What time do you open on Sunday?')
    const { session, partials, turns } = await open(fake.url)
    push(session, speech(1800))
    push(session, silence(500))
    await until(
      'the end of the turn',
      () => turns,
      (t) => t.some((e) => e.type === 'end'),
    )
    // A confident turn's pause is an utterance too, before its end: the answer can start there.
    expect(turns).toEqual([
      { type: 'start' },
      { type: 'eager-end', text: 'what time do you open on sunday', confidence: 0.9 },
      { type: 'end', text: 'What time do you open on Sunday?', confidence: 0.9 },
    ])
    expect(partials.some((p) => !p.stable && !p.endOfSpeech)).toBe(true)
    expect(partials.find((p) => p.endOfSpeech)).toEqual({ text: 'what time do you open on sunday', stable: true, endOfSpeech: true })
    expect(partials.at(-1)).toEqual({ text: 'What time do you open on Sunday?', stable: true, endOfSpeech: true })
    const controls = fake.controls.length
    expect(await session.finalize()).toBe('What time do you open on Sunday?')
    expect(fake.controls.length).toBe(controls)
    await session.close()
  })

  test('the eager end at a pause carries every word said, as the end does: an answer started on it stands', async () => {
    // The engine's voiced measure of a line runs a little past the fake's own (a quiet tail).
    fake.utterances.push({ text: 'Can I bring my dog inside?', voicedMs: 1240 })
    const { session, turns } = await open(fake.url)
    push(session, speech(1200))
    push(session, silence(500))
    await until(
      'the end of the turn',
      () => turns,
      (t) => t.some((e) => e.type === 'end'),
    )
    expect(turns.find((e) => e.type === 'eager-end')).toEqual({ type: 'eager-end', text: 'can i bring my dog inside', confidence: 0.9 })
    await session.close()
  })

  test('with formatting off the end carries the plain words', async () => {
    fake.utterances.push('Do you have parking?')
    const { session, turns } = await open(fake.url, { formatTurns: false })
    push(session, speech(1000))
    push(session, silence(500))
    await until(
      'the end of the turn',
      () => turns.find((e) => e.type === 'end'),
      (e) => e !== undefined,
    )
    expect(turns.find((e) => e.type === 'end')).toEqual({ type: 'end', text: 'do you have parking', confidence: 0.9 })
    expect(fake.streams.at(-1)?.format_turns).toBe('false')
    await session.close()
  })

  test('a turn the model is unsure of is still open at a pause: an eager end, then finalize forces its end with ForceEndpoint', async () => {
    fake.utterances.push({ text: 'I was wondering if', confidence: 0.1 })
    const { session, turns } = await open(fake.url, { maxTurnSilenceMs: 3000 })
    push(session, speech(1000))
    push(session, silence(500))
    await until(
      'the eager end',
      () => turns,
      (t) => t.length === 2,
    )
    expect(turns).toEqual([{ type: 'start' }, { type: 'eager-end', text: 'i was wondering if', confidence: 0.1 }])
    expect(await session.finalize()).toBe('I was wondering if')
    expect(fake.controls.at(-1)).toBe('ForceEndpoint')
    expect(turns.at(-1)).toEqual({ type: 'end', text: 'I was wondering if', confidence: 0.1 })
    await session.close()
  })

  test('words after an eager end resume the turn, which ends once, with all its words', async () => {
    fake.utterances.push({ text: 'I was wondering if you deliver.', voicedMs: 1200, confidence: 0.1 })
    const { session, turns } = await open(fake.url, { minTurnSilenceMs: 200, maxTurnSilenceMs: 600 })
    push(session, speech(600))
    push(session, silence(300))
    await until(
      'the eager end',
      () => turns.length,
      (n) => n === 2,
    )
    push(session, speech(600))
    push(session, silence(800))
    await until(
      'the end',
      () => turns.length,
      (n) => n === 5,
    )
    expect(turns).toEqual([
      { type: 'start' },
      { type: 'eager-end', text: 'i was wondering', confidence: 0.1 },
      { type: 'resumed' },
      { type: 'eager-end', text: 'i was wondering if you deliver', confidence: 0.1 },
      { type: 'end', text: 'I was wondering if you deliver.', confidence: 0.1 },
    ])
    expect(await session.finalize()).toBe('I was wondering if you deliver.')
    await session.close()
  })

  test('a pause inside a sentence: the forced end takes the words so far, the rest is the next turn', async () => {
    fake.utterances.push({ text: 'Do you have parking for customers?', voicedMs: 1200 })
    const { session, turns } = await open(fake.url)
    push(session, speech(600))
    await until(
      'the first words',
      () => turns,
      (t) => t.length === 1,
    )
    expect(await session.finalize()).toBe('Do you have')
    push(session, speech(600))
    push(session, silence(500))
    await until(
      'the rest',
      () => turns.length,
      (n) => n === 5,
    )
    expect(turns.map((e) => e.type)).toEqual(['start', 'end', 'start', 'eager-end', 'end'])
    expect(await session.finalize()).toBe('parking for customers?')
    await session.close()
  })

  test('the next turn is a new start and its own text', async () => {
    fake.utterances.push('Hello there.', 'Can I bring my dog?')
    const { session, turns } = await open(fake.url)
    push(session, speech(600))
    push(session, silence(500))
    await until(
      'the first turn',
      () => turns.length,
      (n) => n === 3,
    )
    expect(await session.finalize()).toBe('Hello there.')
    push(session, speech(1000))
    push(session, silence(500))
    await until(
      'the second turn',
      () => turns.length,
      (n) => n === 6,
    )
    expect(turns.map((e) => e.type)).toEqual(['start', 'eager-end', 'end', 'start', 'eager-end', 'end'])
    expect(await session.finalize()).toBe('Can I bring my dog?')
    await session.close()
  })

  test('a refused key fails the session with the vendor reason, the key never in it', async () => {
    const { session } = await open(fake.url, undefined, 'aai-wrong-key-9876')
    push(session, speech(100))
    const err = await session.finalize().catch((e: Error) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect((err as Error).message).toContain('1008 Unauthorized Connection')
    expect((err as Error).message).toContain('the API key was rejected')
    expect((err as Error).message).not.toContain('aai-wrong-key-9876')
    await session.close()
  })

  test('past the concurrent-session limit the session fails with 3009', async () => {
    const first = await open(oneSession.url)
    await until(
      'the first session',
      () => oneSession.streams.length,
      (n) => n === 1,
    )
    const second = await open(oneSession.url)
    const err = await second.session.finalize().catch((e: Error) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect((err as Error).message).toBe('AssemblyAI closed the stream (3009 Unauthorized Connection: Too many concurrent sessions) (the account is at its concurrent-session limit)')
    await first.session.close()
    await second.session.close()
  })

  test('the vendor failing mid-stream fails the waiting finalize with its reason', async () => {
    failing.utterances.push('What time do you open?')
    const { session } = await open(failing.url)
    push(session, speech(200))
    const waiting = session.finalize().catch((e: Error) => e)
    push(session, speech(300))
    const err = await waiting
    expect(err).toBeInstanceOf(SpeechError)
    expect((err as Error).message).toBe('AssemblyAI closed the stream (3005 Session Cancelled: An error occurred)')
    expect(await session.finalize().catch((e: Error) => e.message)).toBe('AssemblyAI closed the stream (3005 Session Cancelled: An error occurred)')
    await session.close()
  })
})
