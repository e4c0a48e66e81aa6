/** The Deepgram adapter against a local fake of Deepgram's live WebSocket protocol, over a real socket. */
import { afterAll, describe, expect, test } from 'bun:test'
import WebSocket from 'ws'
import { DeepgramStt } from '../../../src/providers/stt/deepgram'
import { SpeechError, type SttPartial, type SttSession } from '../../../src/voice/ports/stt'
import { startDeepgramFake } from '../../fakes/deepgram'
import { until } from '../../support/until'

const KEY = 'dg-secret-key-1234'
const fake = startDeepgramFake(KEY)
/** Pieces finalised every second of speech, so a multi-piece utterance needs little audio. */
const pieces = startDeepgramFake(KEY, { segmentMs: 1000 })
/** Finals leave 150 ms after their audio, so a Finalize can cross a speech_final on the wire. */
const slow = startDeepgramFake(KEY, { finalDelayMs: 150 })
afterAll(() => {
  for (const f of [fake, pieces, slow]) f.stop()
})

const RATE = 16_000
/** A 440 Hz tone at a quarter of full scale: speech to the fake's energy rule. */
const speech = (ms: number) => Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)))
const silence = (ms: number) => new Int16Array((RATE * ms) / 1000)
/** Sends audio in 20 ms frames, as the pipeline does. */
const push = (session: SttSession, pcm: Int16Array) => {
  for (let at = 0; at < pcm.length; at += 320) session.push(pcm.subarray(at, at + 320))
}
async function open(url: string, endpointingMs?: number) {
  const session = await new DeepgramStt({ apiKey: KEY, baseUrl: url, endpointingMs }).open({ language: 'en-US' })
  const partials: SttPartial[] = []
  session.onPartial!((p) => partials.push(p))
  return { session, partials }
}

describe('Deepgram live', () => {
  test('opens with the documented query and auth; audio goes as binary; CloseStream at the end', async () => {
    const { session } = await open(fake.url)
    const before = fake.audioBytes
    push(session, speech(100))
    expect(await session.finalize()).toBe('')
    await session.close()
    expect(fake.streams.at(-1)).toMatchObject({
      encoding: 'linear16',
      sample_rate: '16000',
      channels: '1',
      model: 'nova-3',
      language: 'en-US',
      interim_results: 'true',
      endpointing: '300',
      utterance_end_ms: '1000',
    })
    await until(
      'audio',
      () => fake.audioBytes - before,
      (n) => n === 3200,
    )
    await until(
      'CloseStream',
      () => fake.controls.slice(-2),
      (c) => c.join() === 'Finalize,CloseStream',
    )
  })

  test('interim partials while the caller speaks; speech_final reports the end of speech; finalize then returns the utterance without waiting on a Finalize', async () => {
    const { session, partials } = await open(fake.url)
    const controls = fake.controls.length
    fake.utterances.push('what time do you open')
    push(session, speech(1000))
    await until(
      'four interims',
      () => partials.length,
      (n) => n >= 4,
    )
    expect(partials.slice(0, 4)).toEqual(['what', 'what time', 'what time do', 'what time do you'].map((text) => ({ text, stable: false, endOfSpeech: false })))
    push(session, silence(400))
    const last = await until(
      'speech_final',
      () => partials.at(-1)!,
      (p) => p.endOfSpeech,
    )
    expect(last).toEqual({ text: 'what time do you open', stable: true, endOfSpeech: true })
    expect(await session.finalize()).toBe('what time do you open')
    expect(fake.controls.slice(controls).filter((c) => c === 'Finalize')).toEqual([])
    // The UtteranceEnd a second after the last word is about an utterance already returned: nothing to report.
    const reported = partials.length
    push(session, silence(1000))
    await Bun.sleep(50)
    expect(partials.length).toBe(reported)
    await session.close()
  })

  test('a long utterance arrives in several is_final pieces, joined in order; the next utterance stays separate', async () => {
    const { session, partials } = await open(pieces.url)
    pieces.utterances.push('one two three four five six seven eight nine ten', 'and goodbye')
    push(session, speech(2600))
    push(session, silence(400))
    await until(
      'speech_final',
      () => partials.at(-1),
      (p) => !!p?.endOfSpeech,
    )
    // Each piece on its own (stable) and the interims over it (not).
    expect(partials.filter((p) => p.stable).map((p) => p.text)).toEqual(['one two three four', 'one two three four five six seven eight', 'one two three four five six seven eight nine ten'])
    expect(partials.some((p) => p.text === 'one two three four five' && !p.stable)).toBe(true)
    expect(await session.finalize()).toBe('one two three four five six seven eight nine ten')
    push(session, speech(500))
    push(session, silence(400))
    await until(
      'second speech_final',
      () => partials.at(-1),
      (p) => p?.text === 'and goodbye' && p.endOfSpeech,
    )
    expect(await session.finalize()).toBe('and goodbye')
    await session.close()
  })

  test('our endpointing first: Finalize flushes what Deepgram has not finalised, after the pieces it has', async () => {
    const { session, partials } = await open(pieces.url)
    const controls = pieces.controls.length
    pieces.utterances.push('please call me back tomorrow morning after nine or ten')
    // Long enough for every word to have been said (the fake hears a word per wordMs of speech).
    push(session, speech(3000))
    push(session, silence(100))
    await until(
      'pieces',
      () => partials.filter((p) => p.stable).length,
      (n) => n === 3,
    )
    expect(partials.some((p) => p.endOfSpeech)).toBe(false)
    expect(await session.finalize()).toBe('please call me back tomorrow morning after nine or ten')
    expect(pieces.controls.slice(controls).filter((c) => c === 'Finalize')).toEqual(['Finalize'])
    await session.close()
  })

  test('a Finalize at a pause inside a sentence gives the words said so far; the rest comes with the next, not the next utterance', async () => {
    const { session } = await open(pieces.url)
    pieces.utterances.push('what time do you open on sunday', 'next question')
    push(session, speech(800)) // three words' worth (a word per 250 ms)
    push(session, silence(60))
    expect(await session.finalize()).toBe('what time do')
    push(session, speech(1000))
    push(session, silence(60))
    expect(await session.finalize()).toBe('you open on sunday')
    await session.close()
  })

  test('a Finalize crossing a speech_final: its empty from_finalize answer neither loses nor repeats text, nor takes the next utterance', async () => {
    const { session, partials } = await open(slow.url)
    const controls = slow.controls.length
    slow.utterances.push('book a table for two', 'at eight')
    push(session, speech(1300))
    push(session, silence(400)) // the fake's speech_final is now on its way, 150 ms out
    expect(partials.some((p) => p.endOfSpeech)).toBe(false)
    expect(await session.finalize()).toBe('book a table for two')
    expect(slow.controls.slice(controls).filter((c) => c === 'Finalize')).toEqual(['Finalize'])
    push(session, speech(500))
    await until(
      'next interim',
      () => partials.at(-1)?.text,
      (t) => t === 'at eight' || t === 'at',
    )
    push(session, silence(400))
    expect(await session.finalize()).toBe('at eight')
    await session.close()
  })

  test('UtteranceEnd reports the end of speech when endpointing has not; finalize still collects the words', async () => {
    const { session, partials } = await open(fake.url, 5000)
    fake.utterances.push('yes that is right')
    push(session, speech(1000))
    push(session, silence(1100))
    const last = await until(
      'UtteranceEnd',
      () => partials.at(-1),
      (p) => !!p?.endOfSpeech,
    )
    expect(last).toEqual({ text: 'yes that is right', stable: false, endOfSpeech: true })
    expect(await session.finalize()).toBe('yes that is right')
    expect(fake.controls.at(-1)).toBe('Finalize')
    await session.close()
  })

  test('KeepAlive while no audio flows', async () => {
    const before = fake.controls.length
    const session = await new DeepgramStt({ apiKey: KEY, baseUrl: fake.url, keepAliveMs: 30 }).open({ language: 'en' })
    // Every 30 ms while idle: wait for two to reach the fake (how many fit in a span is up to the machine).
    await until(
      'two KeepAlives',
      () => fake.controls.slice(before).filter((c) => c === 'KeepAlive').length,
      (n) => n >= 2,
    )
    await session.close()
  })

  test('a rejected key fails finalize with a SpeechError that does not carry the key', async () => {
    const wrong = 'dg-wrong-key-9999'
    const session = await new DeepgramStt({ apiKey: wrong, baseUrl: fake.url }).open({ language: 'en' })
    push(session, speech(200))
    await Bun.sleep(50)
    const err = await session.finalize().catch((e) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect(err.message).toContain('401')
    expect(err.message).not.toContain(wrong)
    await session.close()
  })
})

describe('the Deepgram fake speaks the live protocol', () => {
  test('interims, a speech_final after `endpointing` ms of silence, UtteranceEnd with the last word end, an empty from_finalize, Metadata and close on CloseStream', async () => {
    const ws = new WebSocket(`${fake.url}/v1/listen?encoding=linear16&sample_rate=16000&channels=1&interim_results=true&endpointing=200&utterance_end_ms=1000`, {
      headers: { Authorization: `Token ${KEY}` },
    })
    const got: any[] = []
    ws.on('message', (d) => got.push(JSON.parse(String(d))))
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)))
    await new Promise((r) => ws.on('open', r))
    fake.utterances.push('hello there')
    const send = (pcm: Int16Array) => ws.send(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))
    send(silence(500))
    send(speech(600))
    send(silence(1200))
    await until(
      'UtteranceEnd',
      () => got.at(-1)?.type,
      (t) => t === 'UtteranceEnd',
    )
    ws.send(JSON.stringify({ type: 'Finalize' }))
    ws.send(JSON.stringify({ type: 'CloseStream' }))
    expect(await closed).toBe(1000)
    const summary = got.map((m) =>
      m.type === 'Results' ? `${m.is_final ? (m.speech_final ? 'speech_final' : m.from_finalize ? 'from_finalize' : 'final') : 'interim'}:${m.channel.alternatives[0].transcript}` : m.type,
    )
    expect(summary).toEqual(['interim:hello', 'interim:hello there', 'speech_final:hello there', 'UtteranceEnd', 'from_finalize:', 'Metadata'])
    // Speech ran 0.5–1.1 s of audio; the last word ends with it.
    expect(got[2]).toMatchObject({
      start: 0.5,
      channel: {
        alternatives: [
          {
            words: [
              { word: 'hello', start: 0.5 },
              { word: 'there', end: 1.1 },
            ],
          },
        ],
      },
    })
    expect(got[3]).toEqual({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 1.1 })
    expect(got[5]).toMatchObject({ type: 'Metadata', duration: 2.3, channels: 1 })
  })

  test('401 without the key', async () => {
    const ws = new WebSocket(`${fake.url}/v1/listen?encoding=linear16&sample_rate=16000`, { headers: { Authorization: 'Token nope' } })
    const status = await new Promise<number>((r) => ws.on('unexpected-response', (_q, res) => r(res.statusCode!)))
    expect(status).toBe(401)
  })
})
