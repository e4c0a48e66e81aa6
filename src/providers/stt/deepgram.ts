/**
 * Deepgram live transcription (https://developers.deepgram.com/docs/live-streaming-audio): a
 * WebSocket to `/v1/listen` with the audio format and options in the query, `Authorization: Token`,
 * binary 16-bit PCM in, JSON `Results` / `UtteranceEnd` / `Metadata` out.
 *
 * Deepgram ends segments on its own: `is_final` pieces as it goes, `speech_final` after
 * `endpointing` ms of silence, `UtteranceEnd` after `utterance_end_ms` without a word. Each change
 * is reported through `onPartial` (the pieces and the latest interim joined; `stable` when no
 * interim is pending; `endOfSpeech` on `speech_final` or `UtteranceEnd`). Our own endpointing says
 * when an utterance is over: `finalize` then returns the pieces at once when Deepgram has already
 * marked the end of speech with nothing pending (a Finalize then has nothing to flush and its
 * answer is not guaranteed, https://developers.deepgram.com/docs/finalize); otherwise it sends
 * `{"type":"Finalize"}` and waits for the result marked `from_finalize`. Results arriving after
 * that belong to the next utterance. `KeepAlive` while quiet, `CloseStream` at the end.
 */
import WebSocket from 'ws'
import { SpeechError, type SpeechToText, type SpeechToTextOptions, type SttCapabilities, type SttPartial, type SttSession } from '../../voice/public'

const RATE = 16_000
/** Deepgram closes a stream after ~10 s without audio or KeepAlive; 5 s keeps it open with margin. */
export const KEEPALIVE_MS = 5_000
/** A Finalize answers in tens of ms; after 1.5 s we take what is final so far rather than keep the caller waiting. */
export const FINALIZE_WAIT_MS = 1_500
/** Audio held until the socket opens (it opens in ~100–300 ms): 10 s, oldest dropped past it. */
const MAX_PENDING_BYTES = 10 * RATE * 2

/** Live results as the caller speaks, `smart_format` punctuation, word timings; its endpointing is a hint, not a turn model. */
export const DEEPGRAM_CAPABILITIES: SttCapabilities = { streaming: true, interimWords: true, punctuation: true, endOfTurn: false, eagerEndOfTurn: false, wordTimings: true }

interface Result {
  type?: string
  is_final?: boolean
  speech_final?: boolean
  from_finalize?: boolean
  channel?: { alternatives?: { transcript?: string }[] }
}

export class DeepgramStt implements SpeechToText {
  readonly name = 'deepgram'

  constructor(private readonly options: { apiKey: string; baseUrl?: string; keepAliveMs?: number; endpointingMs?: number }) {}

  async open(o: SpeechToTextOptions): Promise<SttSession> {
    const base = (this.options.baseUrl ?? 'wss://api.deepgram.com').replace(/\/$/, '')
    const query = new URLSearchParams({
      encoding: 'linear16',
      sample_rate: String(RATE),
      channels: '1',
      model: o.model ?? 'nova-3',
      language: o.language,
      interim_results: 'true',
      endpointing: String(this.options.endpointingMs ?? 300),
      utterance_end_ms: '1000',
      smart_format: 'true',
    })
    const ws = new WebSocket(`${base}/v1/listen?${query}`, { headers: { Authorization: `Token ${this.options.apiKey}` } })
    const key = this.options.apiKey
    const clean = (m: string) => m.split(key).join('***')
    let pending: Buffer[] = []
    let pendingBytes = 0
    /** The utterance's `is_final` pieces not yet returned, in order. */
    let finals: string[] = []
    /** The latest interim after them ('' when every word heard is final). */
    let interim = ''
    /** Deepgram marked the end of speech (`speech_final` or `UtteranceEnd`) after the last word it heard. */
    let ended = false
    let failure: SpeechError | null = null
    let waiter: { resolve: (t: string) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> } | null = null
    /** A Finalize is out and its `from_finalize` answer has not come (one later than FINALIZE_WAIT_MS answers the next Finalize). */
    let finalizing = false
    const partials: ((p: SttPartial) => void)[] = []
    let lastSent = Date.now()
    const heard = () => [...finals, interim].join(' ').replace(/\s+/g, ' ').trim()
    const report = (endOfSpeech: boolean) => {
      const text = heard()
      if (text) for (const l of partials) l({ text, stable: !interim, endOfSpeech })
    }
    // An interim still pending stays: its words are not final yet and will come as the next utterance's piece.
    const take = () => {
      const text = finals.join(' ').replace(/\s+/g, ' ').trim()
      finals = []
      ended = false
      return text
    }
    const settle = () => {
      if (!waiter) return
      clearTimeout(waiter.timer)
      const w = waiter
      waiter = null
      w.resolve(take())
    }
    const fail = (message: string) => {
      failure ??= new SpeechError('deepgram', clean(message))
      if (waiter) {
        clearTimeout(waiter.timer)
        waiter.reject(failure)
        waiter = null
      }
    }
    ws.on('unexpected-response', (_req, res) => fail(`Deepgram refused the stream: HTTP ${res.statusCode}${res.statusCode === 401 ? ' (the API key was rejected)' : ''}`))
    ws.on('error', (err) => fail(`Deepgram stream error: ${err.message}`))
    ws.on('close', (code, reason) => {
      if (code !== 1000) fail(`Deepgram closed the stream (${code}${reason.length ? ` ${reason}` : ''})`)
      else settle()
      clearInterval(keepAlive)
    })
    let finalizeOnOpen = false
    ws.on('open', () => {
      for (const b of pending) ws.send(b)
      pending = []
      pendingBytes = 0
      if (finalizeOnOpen) ws.send(JSON.stringify({ type: 'Finalize' }))
      finalizeOnOpen = false
    })
    ws.on('message', (data, binary) => {
      if (binary) return
      let m: Result
      try {
        m = JSON.parse(String(data))
      } catch {
        return
      }
      if (m.type === 'Error') return fail(`Deepgram: ${JSON.stringify(m).slice(0, 200)}`)
      if (m.type === 'UtteranceEnd') {
        ended = true
        return report(true)
      }
      if (m.type !== 'Results') return
      const text = (m.channel?.alternatives?.[0]?.transcript ?? '').trim()
      if (m.is_final) {
        if (text) finals.push(text)
        interim = ''
      } else interim = text
      if (m.speech_final) ended = true
      else if (text) ended = false
      // Deepgram answers in order, so this answer comes after every result for the audio before the Finalize.
      if (m.from_finalize && finalizing) {
        finalizing = false
        if (waiter) return settle()
      }
      if (text || m.speech_final) report(!!m.speech_final)
    })
    const keepAlive = setInterval(() => {
      if (ws.readyState === WebSocket.OPEN && Date.now() - lastSent >= (this.options.keepAliveMs ?? KEEPALIVE_MS)) ws.send(JSON.stringify({ type: 'KeepAlive' }))
    }, this.options.keepAliveMs ?? KEEPALIVE_MS)
    return {
      sampleRate: RATE,
      capabilities: DEEPGRAM_CAPABILITIES,
      push(pcm) {
        if (failure) return
        const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)
        lastSent = Date.now()
        if (ws.readyState === WebSocket.OPEN) return ws.send(bytes)
        pending.push(Buffer.from(bytes))
        pendingBytes += bytes.length
        while (pendingBytes > MAX_PENDING_BYTES && pending.length > 1) pendingBytes -= pending.shift()!.length
      },
      finalize() {
        if (failure) return Promise.reject(failure)
        if (waiter) settle()
        if (ended && !interim && !finalizing) return Promise.resolve(take())
        return new Promise<string>((resolve, reject) => {
          waiter = { resolve, reject, timer: setTimeout(settle, FINALIZE_WAIT_MS) }
          finalizing = true
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'Finalize' }))
          else finalizeOnOpen = true
        })
      },
      onPartial(listener) {
        partials.push(listener)
      },
      async close() {
        clearInterval(keepAlive)
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(JSON.stringify({ type: 'CloseStream' }))
          ws.close(1000)
        } else if (ws.readyState === WebSocket.CONNECTING) ws.terminate()
      },
    }
  }
}
