/**
 * The serializer seam (Pipecat's `FrameSerializer`): a provider's media-socket protocol ⇄ the
 * pipeline's frames. The bridge (bridge.ts) knows only this; a second provider's protocol is one
 * file beside twilio.ts and its line in index.ts (`serializerFor`, chosen by the telephony provider).
 */
import type { InboundFrame, OutboundFrame } from '../frames'

export interface FrameSerializer {
  /** The largest message the protocol takes: the bridge refuses a bigger one before parsing it. */
  readonly maxMessageBytes: number
  /** A message as the socket delivered it → a frame; null for one the pipeline ignores. Throws `ProtocolError` naming what is wrong. */
  deserialize(message: unknown): InboundFrame | null
  /** A frame → the message to send; null when the protocol has nothing to send for it. */
  serialize(frame: OutboundFrame): string | null
}

/** A serializer for each socket (it holds the stream's state: its id, its encoding). */
export type SerializerFactory = () => FrameSerializer

/** The other side broke the protocol: the bridge ends the call, naming it. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError'
}
