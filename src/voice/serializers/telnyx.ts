/**
 * Telnyx media streaming ⇄ frames (Telnyx's AsyncAPI "Stream call media over WebSocket",
 * https://developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket, and
 * https://developers.telnyx.com/docs/voice/programmable-voice/media-streaming). In: `connected`,
 * `start` (top-level `stream_id`; `start.call_control_id`, `start.media_format` with `encoding`
 * PCMU, `sample_rate`, `channels`), `media` (`media.payload` base64 RTP payload without headers,
 * `media.track` inbound or outbound, `chunk` and `timestamp` as decimal strings), `dtmf`
 * (`dtmf.digit`), `mark` (a mark we sent, played), `error` and `stop`. Out, in bidirectional `rtp`
 * mode with PCMU: `media` (`media.payload`), `mark` (`mark.name`) and `clear`.
 *
 * The stream is asked for PCMU at 8 kHz both ways (telnyx.ts), so a `start` in another format is
 * refused rather than decoded wrongly. No REST here (hang-ups go through telephony).
 */
import { decodeMulaw, encodeMulaw, PHONE_RATE, resample } from '../codecs'
import type { InboundFrame, OutboundFrame } from '../frames'
import { KEYPAD_DIGIT } from '../keypad'
import { type FrameSerializer, ProtocolError } from './port'
import { BASE64, counter, messageObject, obj, str } from './wire'

/**
 * Largest message we accept. Telnyx sends 20 ms of PCMU a frame (160 bytes, ~400 characters as
 * JSON with its ids); 64 KiB is the bound the Twilio serializer keeps, room for any frame Telnyx
 * documents while bounding what one message can make us allocate.
 */
export const TELNYX_MAX_MESSAGE_BYTES = 64 * 1024

export class TelnyxSerializer implements FrameSerializer {
  readonly maxMessageBytes = TELNYX_MAX_MESSAGE_BYTES
  /** Set by `start`: the stream's id. */
  streamId: string | null = null

  deserialize(message: unknown): InboundFrame | null {
    const m = messageObject(message, TELNYX_MAX_MESSAGE_BYTES)
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
      case 'error':
        // Telnyx reports a frame of ours it could not take (malformed, bad media) and streams on:
        // the call goes on, as it does at Telnyx.
        return null
      case 'stop':
        return { kind: 'stop' }
      default:
        throw new ProtocolError(`unknown event "${event.slice(0, 40)}"`)
    }
  }

  serialize(frame: OutboundFrame): string | null {
    if (!this.streamId) return null
    if (frame.kind === 'clear') return JSON.stringify({ event: 'clear' })
    if (frame.kind === 'mark') return JSON.stringify({ event: 'mark', mark: { name: frame.name } })
    const payload = Buffer.from(encodeMulaw(resample(frame.pcm, frame.sampleRate, PHONE_RATE))).toString('base64')
    return JSON.stringify({ event: 'media', media: { payload } })
  }

  private started(event: string): void {
    if (!this.streamId) throw new ProtocolError(`"${event}" before "start"`)
  }

  private start(m: Record<string, unknown>): InboundFrame {
    if (this.streamId) throw new ProtocolError('a second "start" on one stream')
    const start = obj(m.start, 'start')
    const streamId = str(m.stream_id, 'stream_id')
    const format = start.media_format === undefined ? {} : obj(start.media_format, 'start.media_format')
    const encoding = format.encoding ?? 'PCMU'
    if (encoding !== 'PCMU') throw new ProtocolError(`start.media_format.encoding must be PCMU (the stream asks for it), not ${String(encoding).slice(0, 20)}`)
    const rate = format.sample_rate ?? PHONE_RATE
    if (rate !== PHONE_RATE) throw new ProtocolError('PCMU audio must be 8000 Hz')
    if (format.channels !== undefined && format.channels !== 1) throw new ProtocolError('start.media_format.channels must be 1')
    const params = start.custom_parameters === undefined ? {} : obj(start.custom_parameters, 'start.custom_parameters')
    const customParameters: Record<string, string> = {}
    for (const [k, v] of Object.entries(params)) if (typeof v === 'string') customParameters[k] = v
    this.streamId = streamId
    const callRef = typeof start.call_control_id === 'string' ? start.call_control_id : null
    return { kind: 'start', streamId, callRef, customParameters, encoding: 'audio/x-mulaw', sampleRate: PHONE_RATE }
  }

  private media(m: Record<string, unknown>): InboundFrame | null {
    this.started('media')
    const media = obj(m.media, 'media')
    // Only the caller's side reaches the pipeline; the outbound track (both_tracks) is what we sent.
    if (media.track !== undefined && media.track !== 'inbound') return null
    const payload = str(media.payload, 'media.payload')
    if (payload.length % 4 !== 0 || !BASE64.test(payload)) throw new ProtocolError('media.payload must be base64')
    const pcm = decodeMulaw(Buffer.from(payload, 'base64'))
    const chunk = media.chunk === undefined ? 0 : counter(media.chunk, 'media.chunk')
    const timestamp = media.timestamp === undefined ? 0 : counter(media.timestamp, 'media.timestamp')
    return { kind: 'audio', pcm, sampleRate: PHONE_RATE, chunk, timestamp }
  }
}
