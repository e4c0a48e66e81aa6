/**
 * Twilio Media Streams ⇄ frames (https://www.twilio.com/docs/voice/media-streams/websocket-messages).
 * In: `connected`, `start`, `media`, `dtmf`, `mark`, `stop`. Out: `media`, `mark`, `clear`, each
 * with the stream's `streamSid`. The same protocol serves the sandbox callee and browsers; a
 * browser's `start.mediaFormat` says `audio/l16` (16-bit little-endian PCM) at its rate.
 *
 * `deserialize` checks each message strictly and throws `ProtocolError` naming what is wrong: the
 * bridge ends the call on it rather than guessing. No REST here (hang-ups go through telephony).
 */
import { decodeMulaw, encodeMulaw, fromLittleEndian, PHONE_RATE, resample, toLittleEndian, type WireEncoding } from '../codecs'
import type { InboundFrame, OutboundFrame } from '../frames'
import { KEYPAD_DIGIT } from '../keypad'
import { type FrameSerializer, ProtocolError } from './port'
import { BASE64, counter, messageObject, obj, str } from './wire'

export { ProtocolError } from './port'

/**
 * Largest message we accept. Twilio sends 20 ms of mu-law (160 bytes, ~300 characters as JSON);
 * a browser's 100 ms of 48 kHz L16 is ~13 KB in base64. 64 KiB leaves room and still bounds
 * what one message can make us allocate.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024

const RATES = new Set([8_000, 16_000, 24_000, 44_100, 48_000])

export class TwilioSerializer implements FrameSerializer {
  readonly maxMessageBytes = MAX_MESSAGE_BYTES
  /** Set by `start`: the stream's id and how its audio is encoded. */
  streamSid: string | null = null
  encoding: WireEncoding = 'audio/x-mulaw'
  sampleRate = PHONE_RATE

  /** A message as the socket delivered it (text, or already parsed JSON) → a frame; null for one we ignore. */
  deserialize(message: unknown): InboundFrame | null {
    const m = messageObject(message, MAX_MESSAGE_BYTES)
    const event = str(m.event, 'event')
    switch (event) {
      case 'connected':
        return { kind: 'connected' }
      case 'start':
        return this.start(m)
      case 'media':
        return this.media(m)
      case 'dtmf': {
        this.started(event)
        const digit = str(obj(m.dtmf, 'dtmf').digit, 'dtmf.digit')
        if (!KEYPAD_DIGIT.test(digit)) throw new ProtocolError('dtmf.digit must be one of 0-9 * # A-D')
        return { kind: 'dtmf', digit }
      }
      case 'mark':
        this.started(event)
        return { kind: 'mark', name: str(obj(m.mark, 'mark').name, 'mark.name') }
      case 'stop':
        return { kind: 'stop' }
      default:
        throw new ProtocolError(`unknown event "${event.slice(0, 40)}"`)
    }
  }

  /** A frame → the message to send; null when nothing goes on the wire for it. */
  serialize(frame: OutboundFrame): string | null {
    if (!this.streamSid) return null
    const streamSid = this.streamSid
    if (frame.kind === 'clear') return JSON.stringify({ event: 'clear', streamSid })
    if (frame.kind === 'mark') return JSON.stringify({ event: 'mark', streamSid, mark: { name: frame.name } })
    const pcm = resample(frame.pcm, frame.sampleRate, this.sampleRate)
    const bytes = this.encoding === 'audio/x-mulaw' ? encodeMulaw(pcm) : toLittleEndian(pcm)
    return JSON.stringify({ event: 'media', streamSid, media: { payload: Buffer.from(bytes).toString('base64') } })
  }

  private started(event: string): void {
    if (!this.streamSid) throw new ProtocolError(`"${event}" before "start"`)
  }

  private start(m: Record<string, unknown>): InboundFrame {
    if (this.streamSid) throw new ProtocolError('a second "start" on one stream')
    const start = obj(m.start, 'start')
    const streamSid = str(start.streamSid ?? m.streamSid, 'start.streamSid')
    const params = start.customParameters === undefined ? {} : obj(start.customParameters, 'start.customParameters')
    const customParameters: Record<string, string> = {}
    for (const [k, v] of Object.entries(params)) if (typeof v === 'string') customParameters[k] = v
    const format = start.mediaFormat === undefined ? {} : obj(start.mediaFormat, 'start.mediaFormat')
    const encoding = format.encoding ?? 'audio/x-mulaw'
    if (encoding !== 'audio/x-mulaw' && encoding !== 'audio/l16') throw new ProtocolError('start.mediaFormat.encoding must be audio/x-mulaw or audio/l16')
    const sampleRate = format.sampleRate ?? PHONE_RATE
    if (typeof sampleRate !== 'number' || !RATES.has(sampleRate)) throw new ProtocolError(`start.mediaFormat.sampleRate must be one of ${[...RATES].join(', ')}`)
    if (encoding === 'audio/x-mulaw' && sampleRate !== PHONE_RATE) throw new ProtocolError('mu-law audio must be 8000 Hz')
    if (format.channels !== undefined && format.channels !== 1) throw new ProtocolError('start.mediaFormat.channels must be 1')
    this.streamSid = streamSid
    this.encoding = encoding
    this.sampleRate = sampleRate
    const callRef = typeof start.callSid === 'string' ? start.callSid : null
    return { kind: 'start', streamId: streamSid, callRef, customParameters, encoding, sampleRate }
  }

  private media(m: Record<string, unknown>): InboundFrame | null {
    this.started('media')
    const media = obj(m.media, 'media')
    // Only the caller's side reaches the pipeline; an outbound track echoes what we sent.
    if (media.track !== undefined && media.track !== 'inbound' && media.track !== 'inbound_track') return null
    const payload = str(media.payload, 'media.payload')
    if (payload.length % 4 !== 0 || !BASE64.test(payload)) throw new ProtocolError('media.payload must be base64')
    const bytes = Buffer.from(payload, 'base64')
    if (this.encoding === 'audio/l16' && bytes.length % 2) throw new ProtocolError('L16 media.payload must hold whole 16-bit samples')
    const pcm = this.encoding === 'audio/x-mulaw' ? decodeMulaw(bytes) : fromLittleEndian(bytes)
    const chunk = media.chunk === undefined ? 0 : counter(media.chunk, 'media.chunk')
    const timestamp = media.timestamp === undefined ? 0 : counter(media.timestamp, 'media.timestamp')
    return { kind: 'audio', pcm, sampleRate: this.sampleRate, chunk, timestamp }
  }
}
