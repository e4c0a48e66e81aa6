/**
 * The frames that cross the transport edge (Pipecat's typed frames): what a serializer makes of
 * the line's messages, and what the pipeline sends back. Audio is always 16-bit PCM with its rate.
 * A barge-in's `clear` is not queued behind audio: the playout sends it the moment the chart stops
 * the agent (playout.ts).
 */
export interface AudioFrame {
  kind: 'audio'
  pcm: Int16Array
  sampleRate: number
}

/** What the line sends us (the serializer's output). */
export type InboundFrame =
  | { kind: 'connected' }
  | { kind: 'start'; streamSid: string; callSid: string | null; customParameters: Record<string, string>; encoding: 'audio/x-mulaw' | 'audio/l16'; sampleRate: number }
  | (AudioFrame & { chunk: number; timestamp: number })
  | { kind: 'dtmf'; digit: string }
  /** The line played everything we sent before the mark of that name. */
  | { kind: 'mark'; name: string }
  | { kind: 'stop' }

/** What we send the line (the serializer's input). */
export type OutboundFrame =
  | AudioFrame
  | { kind: 'mark'; name: string }
  /** Drop whatever audio the line still has buffered (barge-in). */
  | { kind: 'clear' }

/** Milliseconds of a PCM chunk. */
export const msOf = (pcm: Int16Array, rate: number): number => (pcm.length * 1000) / rate
