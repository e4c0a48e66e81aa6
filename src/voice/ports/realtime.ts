/**
 * The speech-to-speech engine port: what a call's Realtime session (src/voice/realtime-session.ts)
 * reads from a vendor's connection and sends to it. The vendor adapter (openai.ts) implements it;
 * the voice module depends only on this file, never on the adapter.
 */

/** Tokens a response used (response.done `usage`). */
export interface RealtimeUsage {
  inputTokens: number
  outputTokens: number
  inputAudioTokens: number
  outputAudioTokens: number
  cachedTokens: number
}

/** The server events the call engine reads, each with the fields it uses. */
export type RealtimeEvent =
  | { type: 'session.created' | 'session.updated'; session: object }
  | { type: 'input_audio_buffer.speech_started'; audio_start_ms: number; item_id: string }
  | { type: 'input_audio_buffer.speech_stopped'; audio_end_ms: number; item_id: string }
  | { type: 'input_audio_buffer.committed'; item_id: string }
  | { type: 'response.created'; response: { id: string } }
  | { type: 'response.output_audio.delta'; response_id: string; item_id: string; content_index: number; delta: string }
  | { type: 'response.output_audio_transcript.delta'; response_id: string; item_id: string; delta: string }
  | { type: 'response.output_audio_transcript.done'; response_id: string; item_id: string; transcript: string }
  | { type: 'conversation.item.input_audio_transcription.completed'; item_id: string; transcript: string }
  | { type: 'response.function_call_arguments.done'; response_id: string; item_id: string; call_id: string; name: string; arguments: string }
  | { type: 'response.done'; response: { id: string; status: string; status_details?: { error?: { message?: string } | null } | null; usage?: WireUsage | null } }
  | { type: 'conversation.item.truncated'; item_id: string; audio_end_ms: number }
  | { type: 'rate_limits.updated'; rate_limits: { name: string; remaining: number }[] }
  | { type: 'error'; error: { type?: string; code?: string | null; message: string } }

export interface WireUsage {
  input_tokens?: number
  output_tokens?: number
  input_token_details?: { audio_tokens?: number; cached_tokens?: number }
  output_token_details?: { audio_tokens?: number }
}

export const usageOf = (u: WireUsage | null | undefined): RealtimeUsage => ({
  inputTokens: u?.input_tokens ?? 0,
  outputTokens: u?.output_tokens ?? 0,
  inputAudioTokens: u?.input_token_details?.audio_tokens ?? 0,
  outputAudioTokens: u?.output_token_details?.audio_tokens ?? 0,
  cachedTokens: u?.input_token_details?.cached_tokens ?? 0,
})

/** An open speech-to-speech session with the vendor. */
export interface RealtimeLink {
  /** Each server event, in order; the returned function stops listening. */
  on(listener: (e: RealtimeEvent) => void): () => void
  /** The session ended: `reason` is the vendor's error, null for a close we asked for. */
  onClose(listener: (reason: Error | null) => void): void
  /** A raw client event (a keypad note as a conversation item). */
  send(event: object): void
  /** The caller's μ-law audio. */
  append(mulaw: Uint8Array): void
  /** Stops the response being generated. */
  cancel(): void
  /** Cuts the agent's item to what the caller heard. */
  truncate(itemId: string, audioEndMs: number): void
  /** A tool's answer, then a new response. */
  toolOutput(callId: string, output: unknown): void
  /** Our VAD ended the caller's turn: commit the audio and ask for a response. */
  commitTurn(): void
  /** Asks for a response, with instructions for it alone. */
  respond(instructions?: string): void
  close(): void
}
