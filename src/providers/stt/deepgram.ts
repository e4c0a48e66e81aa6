/**
 * Deepgram live transcription (https://developers.deepgram.com/docs/live-streaming-audio): a
 * WebSocket to `/v1/listen` with the audio format and options in the query, `Authorization: Token`,
 * binary 16-bit PCM in, JSON `Results` / `UtteranceEnd` / `Metadata` out. Our own endpointing says
 * when an utterance is over; `finalize` then sends `{"type":"Finalize"}` and waits for the result
 * marked `from_finalize`, joining the utterance's `is_final` pieces. `KeepAlive` while quiet,
 * `CloseStream` at the end.
 */
import WebSocket from 'ws'
import { SpeechError, type SpeechToText, type SpeechToTextOptions, type SttPartial, type SttSession } from './port'

const RATE = 16_000
/** Deepgram closes a stream after ~10 s without audio or KeepAlive; 5 s keeps it open with margin. */
export const KEEPALIVE_MS = 5_000
/** A Finalize answers in tens of ms; after 1.5 s we take what is final so far rather than keep the caller waiting. */
export const FINALIZE_WAIT_MS = 1_500
/** Audio held until the socket opens (it opens in ~100–300 ms): 10 s, oldest dropped past it. */
const MAX_PENDING_BYTES = 10 * RATE * 2

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
    let finals: string[] = []
    let failure: SpeechError | null = null
    let waiter: { resolve: (t: string) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> } | null = null
    const partials: ((p: SttPartial) => void)[] = []
    let lastSent = Date.now()
    const take = () => {
      const text = finals.join(' ').replace(/\s+/g, ' ').trim()
      finals = []
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
      if (m.type !== 'Results') return
      const text = m.channel?.alternatives?.[0]?.transcript ?? ''
      if (m.is_final) {
        if (text) finals.push(text)
        if (m.from_finalize) settle()
      } else if (text) for (const l of partials) l({ text: [...finals, text].join(' '), stable: false, endOfSpeech: false })
    })
    const keepAlive = setInterval(() => {
      if (ws.readyState === WebSocket.OPEN && Date.now() - lastSent >= (this.options.keepAliveMs ?? KEEPALIVE_MS)) ws.send(JSON.stringify({ type: 'KeepAlive' }))
    }, this.options.keepAliveMs ?? KEEPALIVE_MS)
    return {
      sampleRate: RATE,
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
        return new Promise<string>((resolve, reject) => {
          if (waiter) settle()
          waiter = { resolve, reject, timer: setTimeout(settle, FINALIZE_WAIT_MS) }
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
