/**
 * The pipeline's frames: one tagged union for what flows between stages (Pipecat's typed frames).
 * Audio is always 16-bit PCM with its rate. System frames (`interrupt`, `end`) are never queued
 * behind audio: a queue that holds them puts them first (see `FrameQueue`).
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

export type SystemFrame = { kind: 'interrupt' } | { kind: 'end'; reason: string }

export const isSystem = (frame: { kind: string }): frame is SystemFrame => frame.kind === 'interrupt' || frame.kind === 'end'

/** Samples of `ms` milliseconds at `rate`. */
export const samplesOf = (ms: number, rate: number): number => Math.round((ms * rate) / 1000)
/** Milliseconds of a PCM chunk. */
export const msOf = (pcm: Int16Array, rate: number): number => (pcm.length * 1000) / rate
