/**
 * An OpenAI-compatible transcription endpoint (`POST {base}/audio/transcriptions`, multipart:
 * `file`, `model`, `language`, `response_format=json` → `{ text }`;
 * https://platform.openai.com/docs/api-reference/audio/createTranscription). Request/response:
 * the utterance's audio is kept and sent as a 16 kHz WAV when our endpointing ends it.
 */
import { WaveFile } from 'wavefile'
import { SpeechError, type SpeechToText, type SpeechToTextOptions, type SttCapabilities, type SttSession } from '../../voice/public'
import { UtteranceBuffer } from './utterance'

const RATE = 16_000
/** One utterance at most a minute (older audio dropped): nobody speaks one turn longer. */
const MAX_SAMPLES = 60 * RATE
/** Under 100 ms there is no word to transcribe (and OpenAI refuses audio under 0.1 s). */
const MIN_SAMPLES = RATE / 10
/** Transcribing a few seconds takes 0.3–1.5 s; 15 s bounds a stalled request on a live call. */
export const TRANSCRIBE_TIMEOUT_MS = 15_000

/** A whole utterance at a time, on `finalize`: punctuated text, nothing while the caller speaks. */
export const OPENAI_STT_CAPABILITIES: SttCapabilities = { streaming: false, interimWords: false, punctuation: true, endOfTurn: false, eagerEndOfTurn: false, wordTimings: false }

export class OpenAiTranscription implements SpeechToText {
  readonly name = 'openai'

  constructor(private readonly options: { apiKey: string; baseUrl?: string; model?: string }) {}

  async open(o: SpeechToTextOptions): Promise<SttSession> {
    const { apiKey } = this.options
    const base = (this.options.baseUrl ?? 'https://api.openai.com/v1').replace(/\/$/, '')
    const model = o.model ?? this.options.model ?? 'gpt-4o-mini-transcribe'
    const utterance = new UtteranceBuffer(MAX_SAMPLES)
    return {
      sampleRate: RATE,
      capabilities: OPENAI_STT_CAPABILITIES,
      push: (pcm) => utterance.push(pcm),
      async finalize(signal) {
        const pcm = utterance.take()
        if (pcm.length < MIN_SAMPLES) return ''
        const wav = new WaveFile()
        wav.fromScratch(1, RATE, '16', pcm)
        const form = new FormData()
        form.append('file', new Blob([new Uint8Array(wav.toBuffer())], { type: 'audio/wav' }), 'audio.wav')
        form.append('model', model)
        form.append('language', o.language.split('-')[0]!)
        form.append('response_format', 'json')
        const timeout = AbortSignal.timeout(TRANSCRIBE_TIMEOUT_MS)
        let res: Response
        try {
          res = await fetch(`${base}/audio/transcriptions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}` },
            body: form,
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          })
        } catch (err) {
          if (signal?.aborted) throw err
          throw new SpeechError('openai', `the transcription request failed: ${(err as Error).message}`)
        }
        const body = (await res.json().catch(() => null)) as { text?: string; error?: { message?: string } } | null
        if (!res.ok) throw new SpeechError('openai', `${res.status}: ${(body?.error?.message ?? 'transcription failed').split(apiKey).join('***')}`)
        return (body?.text ?? '').trim()
      },
      async close() {
        utterance.clear()
      },
    }
  }
}
