/**
 * The frames of a call's pipeline (Pipecat's typed frames): what a serializer makes of the line's
 * messages (`InboundFrame`), what the caller's stages hand each other on the way to the
 * speech-to-text engine, and what the pipeline sends back (`OutboundFrame`). Audio is always 16-bit
 * PCM with its rate. A stage takes frames through one seam, `FrameProcessor.push`, in Pipecat's
 * direct mode: a frame is handled when it is pushed, with no queue between stages to wait in.
 * Interruption is not a frame in this flow but one signal every stage takes at once
 * (interrupt-signal.ts); on a stop the playout sends `clear`, never queued behind audio.
 */
import type { OnsetWindow } from '../../machines/voice-turn-events'

export interface AudioFrame {
  kind: 'audio'
  pcm: Int16Array
  sampleRate: number
}

/**
 * What the line sends us (the serializer's output). A `start` names the stream and the call as the
 * carrier does (`streamId`: Twilio's streamSid, Telnyx's stream_id; `callRef`: its call, when it
 * says), in no carrier's words: what the carrier's messages need of them stays in its serializer.
 */
export type InboundFrame =
  | { kind: 'connected' }
  | { kind: 'start'; streamId: string; callRef: string | null; customParameters: Record<string, string>; encoding: 'audio/x-mulaw' | 'audio/l16'; sampleRate: number }
  | (AudioFrame & { chunk: number; timestamp: number })
  | { kind: 'dtmf'; digit: string }
  /** The line played everything we sent before the mark of that name. */
  | { kind: 'mark'; name: string }
  | { kind: 'stop' }

/**
 * The caller's audio into the caller's audio stage. `keyTone`: a key's tone sounds in it (keypad.ts),
 * no speech; `streamMs`: where it ends in the caller's stream, when the line stamps it.
 */
export interface CallerAudioFrame extends AudioFrame {
  keyTone: boolean
  streamMs?: number
}

/**
 * From the caller's audio stage to the speech-to-text stage, in order: each piece of audio as it
 * goes to the VAD (a key's tone already silence), then each window the VAD called speech, with what
 * the audio says about it (the agent's echo or not).
 */
export type SpeechToTextFrame = (AudioFrame & { streamMs?: number }) | { kind: 'speech'; window: OnsetWindow }

/** What we send the line (the serializer's input). */
export type OutboundFrame =
  | AudioFrame
  | { kind: 'mark'; name: string }
  /** Drop whatever audio the line still has buffered (barge-in). */
  | { kind: 'clear' }

/** A stage that takes frames of type `F`: handled when pushed, in the order pushed. */
export interface FrameProcessor<F> {
  push(frame: F): void
}

/** Milliseconds of a PCM chunk. */
export const msOf = (pcm: Int16Array, rate: number): number => (pcm.length * 1000) / rate
