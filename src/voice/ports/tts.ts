/**
 * The text-to-speech port: text in, audio out as it is synthesised (16-bit mono PCM chunks at the
 * adapter's `sampleRate`), cancellable with the signal (barge-in aborts it mid-sentence). The
 * pipeline resamples and encodes for the line (mu-law 8 kHz on the phone). An engine that makes
 * the line's mu-law 8 kHz itself (Cartesia) hands it over decoded: no resampling, and G.711 encodes
 * its decoded bytes back to the same bytes.
 */
export interface SynthesisOptions {
  /** The provider's own voice id (the voices catalogue maps ours to it). */
  voice: string
  language: string
  /** Provider model ("eleven_flash_v2_5", "gpt-4o-mini-tts"); the adapter's default when null. */
  model?: string | null
  /** Speaking rate against the engine's own (1); null or absent: the engine's own, and nothing is sent for it. */
  speed?: number | null
  signal?: AbortSignal
  /**
   * The agent turn this text is a sentence of. An engine that speaks a turn as one line (Cartesia's
   * contexts) keeps the turn's sentences together until `ended`; others ignore it.
   */
  turn?: { id: string; ended: Promise<void> }
  /** Word timings of this text, for an engine that reports them (what a cut turn's caller heard). */
  onWords?: (words: WordTiming[]) => void
}

/** A spoken word and when it plays, in seconds from the start of its text's audio. */
export interface WordTiming {
  word: string
  start: number
  end: number
}

export interface TextToSpeech {
  /** Provider id (`elevenlabs`, `openai`, `cartesia`, `espeak`, `sandbox`). */
  readonly name: string
  /** Rate of the PCM this adapter yields. */
  readonly sampleRate: number
  /** Yields PCM chunks as they arrive; ends when the text is spoken; throws AbortError when aborted. */
  synthesize(text: string, options: SynthesisOptions): AsyncIterable<Int16Array>
  /** Frees what the engine holds for the call (an open socket): the call is over. */
  close?(): void
}

/** PCM16 little-endian bytes as samples (copies when the bytes are not 2-byte aligned). */
export function pcm16(bytes: Uint8Array): Int16Array {
  const even = bytes.byteLength - (bytes.byteLength % 2)
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, even / 2)
  return new Int16Array(bytes.slice(0, even).buffer)
}
