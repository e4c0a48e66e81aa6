/**
 * ElevenLabs streaming text-to-speech
 * (https://elevenlabs.io/docs/api-reference/text-to-speech/stream): `POST
 * /v1/text-to-speech/{voice_id}/stream?output_format=pcm_16000` with `xi-api-key`, JSON
 * `{ text, model_id, voice_settings?: { speed } }` (speed 0.7–1.2, 1 its own rate); the body is raw 16 kHz 16-bit PCM, streamed as it is synthesised.
 */

import type { SynthesisOptions, TextToSpeech } from '../../voice/public'
import { SpeechError } from '../../voice/public'
import { headersDeadline, pcmBody } from './pcm-stream'
import { providerVoice } from './voices'

/** First audio from ElevenLabs' flash models arrives in ~75–300 ms; 10 s is a stalled request. */
export const HEADERS_TIMEOUT_MS = 10_000

export class ElevenLabsTts implements TextToSpeech {
  readonly name = 'elevenlabs'
  readonly sampleRate = 16_000

  constructor(private readonly options: { apiKey: string; baseUrl?: string; model?: string }) {}

  async *synthesize(text: string, o: SynthesisOptions): AsyncIterable<Int16Array> {
    const base = (this.options.baseUrl ?? 'https://api.elevenlabs.io').replace(/\/$/, '')
    const voice = encodeURIComponent(providerVoice('elevenlabs', o.voice))
    const res = await fetch(`${base}/v1/text-to-speech/${voice}/stream?output_format=pcm_16000`, {
      method: 'POST',
      headers: { 'xi-api-key': this.options.apiKey, 'content-type': 'application/json', accept: 'audio/pcm' },
      body: JSON.stringify({ text, model_id: o.model ?? this.options.model ?? 'eleven_flash_v2_5', ...(o.speed == null ? {} : { voice_settings: { speed: o.speed } }) }),
      signal: headersDeadline(HEADERS_TIMEOUT_MS, o.signal),
    }).catch((err: Error) => {
      if (o.signal?.aborted) throw err
      throw new SpeechError('elevenlabs', `the request failed: ${err.message}`)
    })
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { detail?: string | { message?: string } } | null
      const detail = typeof body?.detail === 'string' ? body.detail : (body?.detail?.message ?? res.statusText)
      throw new SpeechError('elevenlabs', `${res.status}: ${detail.split(this.options.apiKey).join('***')}`)
    }
    yield* pcmBody(res, o.signal)
  }
}

/** The voices a key reaches (`GET /v1/voices`), for BYOK's voice list. */
export async function elevenLabsVoices(apiKey: string, baseUrl = 'https://api.elevenlabs.io'): Promise<{ id: string; name: string }[]> {
  const res = await fetch(`${baseUrl.replace(/\/$/, '')}/v1/voices`, { headers: { 'xi-api-key': apiKey }, signal: AbortSignal.timeout(HEADERS_TIMEOUT_MS) })
  if (!res.ok) throw new SpeechError('elevenlabs', `${res.status}: could not list voices`)
  const body = (await res.json()) as { voices?: { voice_id: string; name: string }[] }
  return (body.voices ?? []).map((v) => ({ id: v.voice_id, name: v.name }))
}
