/** The Twilio Media Streams serializer: mu-law from phones, L16 from browsers, strict checks, outbound messages. */
import { describe, expect, test } from 'bun:test'
import { ProtocolError, TwilioSerializer } from '../../src/voice/serializers/twilio'

const start = (mediaFormat: object) => ({ event: 'start', start: { streamSid: 'MZ1', callSid: 'CA1', customParameters: { token: 't', n: 1 }, mediaFormat }, streamSid: 'MZ1' })

describe('Twilio serializer', () => {
  test('mu-law 8 kHz in; media, mark and clear out on the stream', () => {
    const s = new TwilioSerializer()
    expect(s.deserialize(start({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }))).toEqual({
      kind: 'start',
      streamId: 'MZ1',
      callRef: 'CA1',
      customParameters: { token: 't' },
      encoding: 'audio/x-mulaw',
      sampleRate: 8000,
    })
    const media = s.deserialize({ event: 'media', media: { track: 'inbound', chunk: '2', timestamp: '40', payload: Buffer.alloc(160, 0xff).toString('base64') } })
    expect(media).toMatchObject({ kind: 'audio', sampleRate: 8000, chunk: 2, timestamp: 40 })
    expect((media as { pcm: Int16Array }).pcm.length).toBe(160)
    expect(s.deserialize({ event: 'media', media: { track: 'outbound', payload: '' } })).toBeNull()
    const out = JSON.parse(s.serialize({ kind: 'audio', pcm: new Int16Array(1600), sampleRate: 16000 })!)
    expect(out.streamSid).toBe('MZ1')
    expect(Buffer.from(out.media.payload, 'base64').length).toBe(800) // resampled to the line: 100 ms of mu-law
    expect(JSON.parse(s.serialize({ kind: 'mark', name: '1.2' })!)).toEqual({ event: 'mark', streamSid: 'MZ1', mark: { name: '1.2' } })
    expect(JSON.parse(s.serialize({ kind: 'clear' })!)).toEqual({ event: 'clear', streamSid: 'MZ1' })
  })

  test('browsers: 16-bit PCM (audio/l16) at their rate, both ways', () => {
    const s = new TwilioSerializer()
    s.deserialize(start({ encoding: 'audio/l16', sampleRate: 16000, channels: 1 }))
    const pcm = Buffer.alloc(640)
    pcm.writeInt16LE(1234, 0)
    const f = s.deserialize({ event: 'media', media: { payload: pcm.toString('base64') } }) as { pcm: Int16Array; sampleRate: number }
    expect(f.sampleRate).toBe(16000)
    expect(f.pcm[0]).toBe(1234)
    const out = JSON.parse(s.serialize({ kind: 'audio', pcm: new Int16Array(800), sampleRate: 8000 })!)
    expect(Buffer.from(out.media.payload, 'base64').length).toBe(3200) // 100 ms at 16 kHz, 2 bytes a sample
  })

  test('strict: each fault named', () => {
    const cases: [unknown, RegExp][] = [
      ['nope', /not JSON/],
      [{ event: 'media', media: { payload: '' } }, /before "start"/],
      [start({ encoding: 'audio/x-mulaw', sampleRate: 16000 }), /8000 Hz/],
      [start({ encoding: 'audio/ogg' }), /encoding/],
      [start({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 2 }), /channels/],
      [{ event: 'start', start: {} }, /streamSid/],
      [{ noEvent: true }, /event/],
    ]
    for (const [message, reason] of cases) expect(() => new TwilioSerializer().deserialize(message)).toThrow(reason)
    const s = new TwilioSerializer()
    s.deserialize(start({ encoding: 'audio/l16', sampleRate: 16000 }))
    expect(() => s.deserialize({ event: 'media', media: { payload: Buffer.alloc(3).toString('base64') } })).toThrow(ProtocolError)
    expect(() => s.deserialize({ event: 'media', media: { payload: 'AAAAAA==', chunk: '-1' } })).toThrow(/chunk/)
  })
})
