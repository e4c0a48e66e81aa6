/**
 * One socket path, two protocols: a serializer that takes the protocol a stream's `start` names.
 * The sandbox network's callees, the console and browsers speak Twilio Media Streams on every
 * instance, so an instance whose carrier speaks another protocol (Telnyx) hears both on
 * `/media/…`. Both protocols open with `connected`, then `start`; the `start` tells them apart, and
 * every message after it goes to the chosen serializer.
 */
import type { InboundFrame, OutboundFrame } from '../frames'
import { type FrameSerializer, ProtocolError, type SerializerFactory } from './port'

export interface StartProtocol {
  /** Is this parsed `start` message this protocol's? */
  owns(start: Record<string, unknown>): boolean
  serializer: SerializerFactory
}

export function byStart(protocols: readonly StartProtocol[]): SerializerFactory {
  return () => new ByStart(protocols.map((p) => ({ owns: p.owns, serializer: p.serializer() })))
}

class ByStart implements FrameSerializer {
  readonly maxMessageBytes: number
  private chosen: FrameSerializer | null = null

  constructor(private readonly protocols: { owns: (start: Record<string, unknown>) => boolean; serializer: FrameSerializer }[]) {
    this.maxMessageBytes = Math.max(...protocols.map((p) => p.serializer.maxMessageBytes))
  }

  deserialize(message: unknown): InboundFrame | null {
    if (this.chosen) return this.chosen.deserialize(message)
    let m: unknown = message
    if (typeof message === 'string') {
      try {
        m = JSON.parse(message)
      } catch {
        throw new ProtocolError('message is not JSON')
      }
    }
    const first = this.protocols[0]!.serializer
    if (!m || typeof m !== 'object' || Array.isArray(m)) return first.deserialize(m)
    const parsed = m as Record<string, unknown> // cast: a non-array object, checked just above
    if (parsed.event !== 'start') return first.deserialize(parsed)
    const owner = this.protocols.find((p) => p.owns(parsed))
    if (!owner) throw new ProtocolError('"start" of no protocol this line speaks')
    this.chosen = owner.serializer
    return owner.serializer.deserialize(parsed)
  }

  serialize(frame: OutboundFrame): string | null {
    return this.chosen?.serialize(frame) ?? null
  }
}
