/**
 * The transport port: what a media transport (the WebSocket bridge, bridge.ts; WebRTC, webrtc.ts)
 * sees of a call. The calls feature implements MediaCalls; a transport hands each call's frames to
 * its LiveCall. Kept apart from bridge.ts so the WebRTC transport needs none of the bridge.
 */
import type { InboundFrame, OutboundFrame } from './frames'

/** Why a stream is refused, with the close code that says it (bridge.ts CLOSE): the calls feature decides both. */
export interface Refusal {
  refused: string
  code: number
}

/** A stream as its `start` named it (frames.ts). */
export interface StreamInfo {
  streamId: string
  callRef: string | null
  sampleRate: number
  encoding: 'audio/x-mulaw' | 'audio/l16'
  customParameters: Record<string, string>
}

/** A call's pipeline as the bridge sees it. */
export interface LiveCall {
  frame(frame: InboundFrame): void
  drained(): void
  /** The stream ended: `stop` (the line hung up), `lost` (socket died or went silent), `protocol` (it broke the protocol). */
  ended(how: 'stop' | 'lost' | 'protocol', detail?: string): void
}

export type Attached = { call: LiveCall } | Refusal

/** The calls feature's side of the bridge. */
export interface MediaCalls {
  /** Upgrade check (the carrier's proof it opened the socket: its telephony's `mediaUpgradeRefusal`); a string refuses with 403. */
  checkUpgrade(request: Request): string | null
  attach(callId: string, token: string | undefined, stream: StreamInfo, io: { send(frame: OutboundFrame): boolean; close(code: number, reason: string): void }): Promise<Attached>
  /** Why a stream for this call and token would be refused now, or null (transports that set up first ask). */
  refusal(callId: string, token: string | undefined): Promise<Refusal | null>
}
