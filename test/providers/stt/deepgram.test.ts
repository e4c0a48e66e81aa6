/** The Deepgram adapter against a local fake of Deepgram's live WebSocket protocol. */
import { afterAll, describe, expect, test } from 'bun:test'
import { DeepgramStt } from '../../../src/providers/stt/deepgram'
import { SpeechError } from '../../../src/providers/stt/port'
import { startDeepgramFake } from '../../fakes/deepgram'

const KEY = 'dg-secret-key-1234'
const fake = startDeepgramFake(KEY)
afterAll(() => fake.stop())
const second = new Int16Array(16_000)

describe('Deepgram live', () => {
  test('opens with the documented query and auth; audio goes as binary; interim then final text per utterance', async () => {
    const stt = new DeepgramStt({ apiKey: KEY, baseUrl: fake.url })
    const session = await stt.open({ language: 'en-US' })
    const interim: string[] = []
    session.onPartial!((p) => interim.push(p.text))
    fake.utterances.push('what time do you open', 'thanks')
    for (let i = 0; i < 10; i++) session.push(second.subarray(i * 1600, (i + 1) * 1600))
    expect(await session.finalize()).toBe('what time do you open')
    session.push(second.subarray(0, 3200))
    expect(await session.finalize()).toBe('thanks')
    await session.close()
    expect(fake.streams[0]).toMatchObject({ encoding: 'linear16', sample_rate: '16000', channels: '1', model: 'nova-3', language: 'en-US', interim_results: 'true', utterance_end_ms: '1000' })
    expect(fake.audioBytes).toBe(16_000 * 2 + 3200 * 2)
    expect(interim[0]).toBe('what')
    await Bun.sleep(20)
    expect(fake.controls).toEqual(['Finalize', 'Finalize', 'CloseStream'])
  })

  test('KeepAlive while no audio flows', async () => {
    const before = fake.controls.length
    const session = await new DeepgramStt({ apiKey: KEY, baseUrl: fake.url, keepAliveMs: 30 }).open({ language: 'en' })
    await Bun.sleep(120)
    await session.close()
    expect(fake.controls.slice(before).filter((c) => c === 'KeepAlive').length).toBeGreaterThanOrEqual(1)
  })

  test('a rejected key fails finalize with a SpeechError that does not carry the key', async () => {
    const wrong = 'dg-wrong-key-9999'
    const session = await new DeepgramStt({ apiKey: wrong, baseUrl: fake.url }).open({ language: 'en' })
    session.push(second)
    await Bun.sleep(50)
    const err = await session.finalize().catch((e) => e)
    expect(err).toBeInstanceOf(SpeechError)
    expect(err.message).toContain('401')
    expect(err.message).not.toContain(wrong)
    await session.close()
  })
})
