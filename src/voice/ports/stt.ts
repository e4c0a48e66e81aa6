/**
 * The speech-to-text port. The voice pipeline opens one session per call, pushes the customer's
 * audio as it arrives (16-bit PCM at the rate the adapter asked for) and, when its own endpointing
 * decides the customer finished an utterance, asks for that utterance's final text.
 *
 * Streaming vendors (Deepgram live) transcribe as audio arrives and `finalize` only flushes;
 * request/response vendors (an OpenAI-compatible `/audio/transcriptions`, pocketsphinx, the sandbox
 * double) keep the utterance's audio and transcribe it on `finalize`. Both shapes fit one port.
 */
export interface SpeechToTextOptions {
  /** BCP-47 language of the agent ("en", "en-US", "hi"). */
  language: string
  /** Provider model ("nova-3", "whisper-1"); the adapter's default when null. */
  model?: string | null
  /** AssemblyAI's turn detection, as the agent sets it (`voice.assemblyai`); other engines ignore it. */
  assemblyai?: AssemblyAiTurnSettings | null
  /** The agent's end-of-turn settings for Deepgram Flux (its `voice.flux`); other engines ignore them. */
  flux?: { eotThreshold?: number | null; eagerEotThreshold?: number | null; eotTimeoutMs?: number | null } | null
}

/**
 * AssemblyAI Universal-Streaming's turn settings (docs/api/voice.md "AssemblyAI"); null or absent:
 * the vendor's own default.
 */
export interface AssemblyAiTurnSettings {
  /** `end_of_turn_confidence_threshold`, 0–1: how sure its model must be that the turn ended. */
  endOfTurnConfidence?: number | null
  /** `min_turn_silence`, ms: the silence before a confident end of turn. */
  minTurnSilenceMs?: number | null
  /** `max_turn_silence`, ms: the silence that ends a turn however unsure the model is. */
  maxTurnSilenceMs?: number | null
  /** `format_turns`: an ended turn's text comes again punctuated and cased (default true here). */
  formatTurns?: boolean | null
}

export interface SttPartial {
  /** Everything heard in the current utterance so far: the final pieces and the latest interim, joined. */
  text: string
  /** The engine will not revise this text any more (Deepgram `is_final`; a decoder's settled hypothesis). */
  stable: boolean
  /** The engine's own end-of-speech mark (Deepgram `speech_final` or `UtteranceEnd`); a hint, not the decision. */
  endOfSpeech: boolean
}

/**
 * What an engine can do, declared once (as LiveKit's `STTCapabilities`), so the pipeline reads it
 * rather than probing for optional members.
 */
export interface SttCapabilities {
  /** Hears audio as it arrives (Deepgram, AssemblyAI, live pocketsphinx); false: transcribes on `finalize`. */
  readonly streaming: boolean
  /** Reports words while the caller speaks (`onPartial`). */
  readonly interimWords: boolean
  /** Its text carries punctuation and casing the end-of-turn rules can read. */
  readonly punctuation: boolean
  /** Decides the end of the caller's turn itself (`onTurn` 'end': Deepgram Flux, AssemblyAI v3). */
  readonly endOfTurn: boolean
  /** Also says a turn has probably ended before it is sure ('eager-end'), and takes it back ('resumed'). */
  readonly eagerEndOfTurn: boolean
  /** Times each word. */
  readonly wordTimings: boolean
}

/**
 * A turn event of an engine that judges turns itself (capabilities.endOfTurn). `eager-end` lets
 * the agent start its answer early; `resumed` withdraws that answer; `end` releases it.
 */
export type SttTurnEvent =
  | { readonly type: 'start' }
  | { readonly type: 'eager-end'; readonly text: string; readonly confidence?: number }
  | { readonly type: 'resumed' }
  | { readonly type: 'end'; readonly text: string; readonly confidence?: number }

export interface SttSession {
  /** Sample rate the session wants its audio at (the pipeline resamples to it). */
  readonly sampleRate: number
  /**
   * Audio of the customer, in order. Never blocks: the adapter buffers or forwards. `streamMs`:
   * where this audio ends in the caller's stream, when the line stamps its frames (the sandbox
   * double follows its scripted caller's words by it); engines that hear the audio ignore it.
   */
  push(pcm: Int16Array, streamMs?: number): void
  /**
   * The customer finished an utterance (the pipeline's endpointing): resolves with its final text,
   * '' when nothing was said (noise). Audio pushed after the call belongs to the next utterance.
   */
  finalize(signal?: AbortSignal): Promise<string>
  /**
   * What the engine has heard of the current utterance so far, each time that changes, for an
   * engine whose capabilities say `interimWords` (Deepgram live, the live pocketsphinx decoder).
   * The pipeline's end-of-turn rules read it.
   */
  onPartial?(listener: (partial: SttPartial) => void): void
  /**
   * Whether its words are good enough to judge a turn by (end-of-turn rules, early replies); false
   * for an engine that garbles most words (pocketsphinx: 78% word error rate on phone audio), whose
   * turns then wait the rules' neutral time. True when absent.
   */
  readonly turnCues?: boolean
  /**
   * An engine whose words are not to be trusted (`turnCues: false`) may say whether `text` sounds
   * like one of `phrases` (pocketsphinx, through its pronouncing dictionary: "top" sounds like "stop").
   */
  soundsLike?(text: string, phrases: readonly string[]): boolean
  /**
   * The pipeline's VAD hears speech (called at every speech window). An engine that shares scarce
   * decoders (the live pocketsphinx pool) takes one now, with the audio since a little before, and
   * leaves the audio between utterances undecoded. Others ignore it.
   */
  speech?(): void
  /** How long the last final waited for a free decoder, ms (engines with a shared pool). */
  readonly queuedMs?: number
  /** What the engine can do: the pipeline reads this, not which optional members it has. */
  readonly capabilities: SttCapabilities
  /**
   * The engine's own turn events, for an engine whose capabilities say `endOfTurn`. There
   * `finalize` returns the text of the last 'end' (or, when none came, what was heard so far).
   */
  onTurn?(listener: (event: SttTurnEvent) => void): void
  /** Ends the session (the call ended); idempotent. */
  close(): Promise<void>
}

export interface SpeechToText {
  /** Provider id (`deepgram`, `assemblyai`, `openai`, `pocketsphinx`, `sandbox`). */
  readonly name: string
  open(options: SpeechToTextOptions): Promise<SttSession>
}

/** A provider failed (refused the key, went away): the call's pipeline says so and ends politely. */
export class SpeechError extends Error {
  override readonly name = 'SpeechError'
  /**
   * The engine is at capacity for now (every decoder held and the queue for them full): this
   * utterance is lost, the engine itself is fine, so the call goes on.
   */
  readonly busy: boolean
  constructor(
    readonly provider: string,
    message: string,
    options: { busy?: boolean } = {},
  ) {
    super(message)
    this.busy = options.busy ?? false
  }
}
