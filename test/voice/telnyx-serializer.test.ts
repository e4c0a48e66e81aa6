/**
 * The Telnyx media-streaming serializer (frames as Telnyx's AsyncAPI documents them) and the line
 * of a Telnyx instance, which takes Telnyx's streams and the sandbox's Twilio ones by their `start`.
 */
import { describe, expect, test } from 'bun:test'
import { SERIALIZERS, serializerFor } from '../../src/voice/serializers'
import { TelnyxSerializer } from '../../src/voice/serializers/telnyx'

const start = (mediaFormat: object = { encoding: 'PCMU', sample_rate: 8000, channels: 1 }) => ({
  event: 'start',
  sequence_number: '1',
  stream_id: '32de0dea-53cb-4b21-89a4-9e1819c043bc',
  start: { user_id: 'u1', call_control_id: 'v3:cc1', call_session_id: 's1', from: '+14155550100', to: '+14155550101', custom_parameters: { customer: 'c1' }, media_format: mediaFormat },
})
const mulaw = (n: number) => Buffer.alloc(n, 0xff).toString('base64')

describe('Telnyx serializer', () => {
  test('PCMU 8 kHz in; media, mark and clear out in its bidirectional rtp shape', () => {
    const s = new TelnyxSerializer()
    expect(s.serialize({ kind: 'clear' })).toBeNull() // nothing before the stream has started
    expect(s.deserialize(JSON.stringify({ event: 'connected', version: '1.0.0' }))).toEqual({ kind: 'connected' })
    expect(s.deserialize(JSON.stringify(start()))).toEqual({
      kind: 'start',
      streamId: '32de0dea-53cb-4b21-89a4-9e1819c043bc',
      callRef: 'v3:cc1',
      customParameters: { customer: 'c1' },
      encoding: 'audio/x-mulaw',
      sampleRate: 8000,
    })
    const media = s.deserialize({ event: 'media', sequence_number: '4', stream_id: 'x', media: { track: 'inbound', chunk: '2', timestamp: '40', payload: mulaw(160) } })
    expect(media).toMatchObject({ kind: 'audio', sampleRate: 8000, chunk: 2, timestamp: 40 })
    expect((media as { pcm: Int16Array }).pcm.length).toBe(160)
    expect(s.deserialize({ event: 'media', media: { track: 'outbound', chunk: '3', timestamp: '60', payload: mulaw(160) } })).toBeNull()
    expect(s.deserialize({ event: 'dtmf', stream_id: 'x', occurred_at: '2026-12-07T21:00:00Z', dtmf: { digit: '5' } })).toEqual({ kind: 'dtmf', digit: '5' })
    expect(s.deserialize({ event: 'mark', stream_id: 'x', mark: { name: '1.2' } })).toEqual({ kind: 'mark', name: '1.2' })
    expect(s.deserialize({ event: 'error', stream_id: 'x', payload: { code: 100003, title: 'Malformed frame', detail: 'x' } })).toBeNull()
    expect(s.deserialize({ event: 'stop', stream_id: 'x', stop: { call_control_id: 'v3:cc1' } })).toEqual({ kind: 'stop' })
    const out = JSON.parse(s.serialize({ kind: 'audio', pcm: new Int16Array(1600), sampleRate: 16000 })!)
    expect(Object.keys(out)).toEqual(['event', 'media'])
    expect(Buffer.from(out.media.payload, 'base64').length).toBe(800) // resampled to the line: 100 ms of PCMU
    expect(JSON.parse(s.serialize({ kind: 'mark', name: '1.2' })!)).toEqual({ event: 'mark', mark: { name: '1.2' } })
    expect(JSON.parse(s.serialize({ kind: 'clear' })!)).toEqual({ event: 'clear' })
  })

  test('strict: each fault named', () => {
    const cases: [unknown, RegExp][] = [
      ['nope', /not JSON/],
      [{ event: 'media', media: { payload: mulaw(160) } }, /before "start"/],
      [{ event: 'dtmf', dtmf: { digit: '1' } }, /before "start"/],
      [start({ encoding: 'OPUS', sample_rate: 8000 }), /PCMU/],
      [start({ encoding: 'PCMU', sample_rate: 16000 }), /8000 Hz/],
      [start({ encoding: 'PCMU', sample_rate: 8000, channels: 2 }), /channels/],
      [{ event: 'start', start: {} }, /stream_id/],
      [{ event: 'speak' }, /unknown event/],
    ]
    for (const [message, reason] of cases) expect(() => new TelnyxSerializer().deserialize(message)).toThrow(reason)
    const s = new TelnyxSerializer()
    s.deserialize(start())
    expect(() => s.deserialize(start())).toThrow(/second "start"/)
    expect(() => s.deserialize({ event: 'media', media: { payload: 'not base64!' } })).toThrow(/base64/)
    expect(() => s.deserialize({ event: 'media', media: { payload: mulaw(3), chunk: '-1' } })).toThrow(/chunk/)
    expect(() => s.deserialize({ event: 'dtmf', dtmf: { digit: 'x' } })).toThrow(/dtmf.digit/)
  })
})

describe("a Telnyx instance's line", () => {
  test('is registered for the provider named telnyx', () => {
    expect(serializerFor('telnyx')).toBe(SERIALIZERS.telnyx!)
  })

  test("takes Telnyx's stream by its start and answers in Telnyx's shape", () => {
    const s = serializerFor('telnyx')()
    expect(s.deserialize(JSON.stringify({ event: 'connected', version: '1.0.0' }))).toEqual({ kind: 'connected' })
    expect(s.deserialize(JSON.stringify(start()))).toMatchObject({ kind: 'start', callRef: 'v3:cc1' })
    expect(s.deserialize(JSON.stringify({ event: 'dtmf', dtmf: { digit: '#' } }))).toEqual({ kind: 'dtmf', digit: '#' })
    expect(JSON.parse(s.serialize({ kind: 'clear' })!)).toEqual({ event: 'clear' })
  })

  test("takes the sandbox's Twilio Media Streams by its start, on the same path", () => {
    const s = serializerFor('telnyx')()
    expect(s.deserialize(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }))).toEqual({ kind: 'connected' })
    const twilioStart = {
      event: 'start',
      streamSid: 'MZ1',
      start: { streamSid: 'MZ1', callSid: 'CA1', customParameters: { token: 't' }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
    }
    expect(s.deserialize(JSON.stringify(twilioStart))).toMatchObject({ kind: 'start', streamId: 'MZ1', customParameters: { token: 't' } })
    expect(JSON.parse(s.serialize({ kind: 'clear' })!)).toEqual({ event: 'clear', streamSid: 'MZ1' })
    expect(() => s.deserialize('nope')).toThrow(/not JSON/)
  })
})
