/**
 * Vendor latencies for running the local fakes like the hosted services (the `bench:turns` vendor
 * profile), each from the vendor's published figures or a published measurement of its API.
 */
export const REALISTIC = {
  /**
   * Deepgram final result after its audio: "Deepgram's models are optimized to deliver transcription
   * latency in 300 milliseconds or less for streaming workloads"
   * (https://developers.deepgram.com/docs/measuring-streaming-latency); 250 ms sits inside that bound.
   */
  deepgramFinalMs: 250,
  /**
   * Deepgram Flux's end of turn into the caller's silence: "~260ms end-of-turn detection"
   * (https://developers.deepgram.com/docs/flux/quickstart).
   */
  fluxEndOfTurnMs: 260,
  /** Flux's EagerEndOfTurn into the silence: Deepgram publishes no figure; 200 ms, before the end's 260 (test/fakes/deepgram-flux.ts). */
  fluxEagerEndMs: 200,
  /**
   * OpenAI time to first token: OpenAI publishes none; Artificial Analysis measures a median 0.39 s
   * for GPT-4o on OpenAI's API (https://artificialanalysis.ai/models/gpt-4o-2024-05-13/providers), and
   * a comparison gives ~0.4 s for gpt-4o-mini (https://apikeyhealth.com/blogs/the-latency-tradeoff); 350 ms.
   */
  openaiFirstTokenMs: 350,
  /** OpenAI output speed: the same measurement gives 81 tokens a second, ~12 ms a token. */
  openaiTokenMs: 12,
  /**
   * ElevenLabs time to first audio byte: Flash models take ~75 ms of inference, and the public
   * internet round trip adds 20–200 ms (https://elevenlabs.io/docs/eleven-api/concepts/latency);
   * 200 ms is 75 ms plus a mid-range trip.
   */
  elevenlabsFirstAudioMs: 200,
  /**
   * ElevenLabs' chunking is not published; 100 ms of audio a chunk (3.2 kB at pcm_16000) is our
   * choice. The speed is what playout feels.
   */
  elevenlabsChunkMs: 100,
  /**
   * ElevenLabs generation speed over real time: ~75 ms of inference for a short input (same page)
   * that plays for a second or two is 10–25× real time; 10× is the slow end.
   */
  elevenlabsSpeedup: 10,
  /**
   * Cartesia time to first audio: "achieves 90ms model latency" for Sonic
   * (https://docs.cartesia.ai/2024-11-13/build-with-cartesia/models), plus the same mid-range
   * internet trip as ElevenLabs' above (125 ms): 215 ms.
   */
  cartesiaFirstAudioMs: 215,
  /** Cartesia's chunking is not published; 20 ms of audio a chunk is our choice. */
  cartesiaChunkMs: 20,
  /** Cartesia's generation speed over real time: as ElevenLabs' (90 ms of inference for a second or two of speech), 10×. */
  cartesiaSpeedup: 10,
  /**
   * AssemblyAI Universal-Streaming's words after their audio: "immutable transcripts in ~300ms"
   * (https://www.assemblyai.com/blog/introducing-universal-streaming); its end of turn comes no sooner
   * than that after the last word, and no sooner than its turn silence (the fake's audio time).
   */
  assemblyaiEndMs: 300,
  /**
   * OpenAI Realtime's first audio after the turn ends: GPT-4o "can respond to audio inputs in as
   * little as 232 milliseconds, with an average of 320 milliseconds" (https://openai.com/index/hello-gpt-4o/);
   * 320 ms. Its server VAD's `silence_duration_ms` (500 by default,
   * https://platform.openai.com/docs/guides/realtime-vad) comes before it, so the floor a caller
   * lives on this engine is 820 ms.
   */
  realtimeFirstAudioMs: 320,
  /** The Realtime API's generation speed is not published; 10× real time, as ElevenLabs' slow end above. */
  realtimeSpeedup: 10,
  /** The server VAD's default silence before it ends a turn (the docs above). */
  realtimeVadSilenceMs: 500,
} as const

/** The fakes' options for those delays: `startDeepgramFake(key, REALISTIC_OPTIONS.deepgram)` and so on. */
export const REALISTIC_OPTIONS = {
  deepgram: { finalDelayMs: REALISTIC.deepgramFinalMs },
  openai: { firstTokenMs: REALISTIC.openaiFirstTokenMs, tokenMs: REALISTIC.openaiTokenMs },
  assemblyai: { finalDelayMs: REALISTIC.assemblyaiEndMs },
  elevenlabs: { firstAudioMs: REALISTIC.elevenlabsFirstAudioMs, audioChunkMs: REALISTIC.elevenlabsChunkMs, speedup: REALISTIC.elevenlabsSpeedup },
  cartesia: { firstAudioMs: REALISTIC.cartesiaFirstAudioMs, chunkMs: REALISTIC.cartesiaChunkMs, speedup: REALISTIC.cartesiaSpeedup },
  realtime: { firstAudioMs: REALISTIC.realtimeFirstAudioMs, speedup: REALISTIC.realtimeSpeedup },
}
