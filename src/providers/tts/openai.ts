/**
 * OpenAI-compatible speech (`POST {base}/audio/speech`,
 * https://platform.openai.com/docs/api-reference/audio/createSpeech): JSON `{ model, input, voice,
 * response_format: "pcm" }`; `pcm` is raw 24 kHz 16-bit little-endian mono, streamed.
 */

import type { SynthesisOptions, TextToSpeech } from '../../voice/public'
import { SpeechError } from '../../voice/public'
import { headersDeadline, pcmBody } from './pcm-stream'
import { providerVoice } from './voices'

/** OpenAI's first audio byte arrives in ~0.3–1 s; 10 s is a stalled request. */
export const HEADERS_TIMEOUT_MS = 10_000

export class OpenAiSpeech implements TextToSpeech {
  readonly name = 'openai'
  readonly sampleRate = 24_000

  constructor(private readonly options: { apiKey: string; baseUrl?: string; model?: string }) {}

  async *synthesize(text: string, o: SynthesisOptions): AsyncIterable<Int16Array> {
    const base = (this.options.baseUrl ?? 'https://api.openai.com/v1').replace(/\/$/, '')
    const res = await fetch(`${base}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: o.model ?? this.options.model ?? 'gpt-4o-mini-tts',
        input: text,
        voice: providerVoice('openai', o.voice),
        response_format: 'pcm',
        ...(o.speed == null ? {} : { speed: o.speed }),
      }),
      signal: headersDeadline(HEADERS_TIMEOUT_MS, o.signal),
    }).catch((err: Error) => {
      if (o.signal?.aborted) throw err
      throw new SpeechError('openai', `the request failed: ${err.message}`)
    })
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null
      throw new SpeechError('openai', `${res.status}: ${(body?.error?.message ?? res.statusText).split(this.options.apiKey).join('***')}`)
    }
    yield* pcmBody(res, o.signal)
  }
}
