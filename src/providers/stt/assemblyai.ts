/**
 * AssemblyAI Universal-Streaming, its v3 WebSocket (https://www.assemblyai.com/docs/streaming/universal-streaming,
 * the message sequence https://www.assemblyai.com/docs/streaming/message-sequence, close codes
 * https://www.assemblyai.com/docs/streaming/common-session-errors-and-closures; field names as the
 * SDK has them, https://github.com/AssemblyAI/assemblyai-node-sdk/blob/main/src/types/streaming/index.ts):
 * `wss://streaming.assemblyai.com/v3/ws` with the options in the query (`speech_model` is required),
 * `Authorization: <key>` (no scheme), binary 16-bit PCM in chunks of 50–1,000 ms, JSON out:
 * `Begin`, `Turn` (`turn_order`, `end_of_turn`, `turn_is_formatted`, `end_of_turn_confidence`,
 * `transcript` of the final words, `words` with `word_is_final`), `Termination`, and before an
 * error close an `Error` frame (`error_code`, `error`) whose code the socket then closes with.
 *
 * The engine judges turns itself: each new `turn_order` is a turn 'start'; the turn's `end_of_turn`
 * message (its formatted repeat when `format_turns` is on) is its 'end', with the text. A pause
 * inside an open turn comes with `utterance` filled in ("enables eager LLM inference", the message
 * sequence page): an 'eager-end' with the turn's words so far; new words in that turn after it are
 * its 'resumed'. Every Turn is also reported through `onPartial`, so the end-of-turn rules still
 * read the words. `finalize`
 * (our own endpointing) returns the ended turns' text at once when no turn is open; otherwise it
 * sends `ForceEndpoint` and waits for that turn's end. `Terminate` at the end.
 */
import WebSocket from 'ws'
import { type AssemblyAiTurnSettings, SpeechError, type SpeechToText, type SpeechToTextOptions, type SttCapabilities, type SttPartial, type SttSession, type SttTurnEvent } from '../../voice/public'

const RATE = 16_000
/**
 * AssemblyAI closes a stream sent a chunk shorter than 50 ms or longer than 1,000 ms (3007 "Input
 * duration violation", the close-codes page); 50 ms, the least, holds the caller's audio back least.
 */
export const CHUNK_MS = 50
const CHUNK_SAMPLES = (RATE * CHUNK_MS) / 1000
/** A ForceEndpoint answers within a turn's formatting (tens to a few hundred ms); after 1.5 s we take what has ended. */
export const FINALIZE_WAIT_MS = 1_500
/** Audio held until the socket opens (it opens in ~100–300 ms): 10 s, oldest dropped past it. */
const MAX_PENDING_BYTES = 10 * RATE * 2

/** The speech models a key is offered (the SDK's StreamingSpeechModel): English, and six languages with detection. */
export const ASSEMBLYAI_MODELS = ['universal-streaming-english', 'universal-streaming-multilingual'] as const

export const ASSEMBLYAI_CAPABILITIES: SttCapabilities = {
  streaming: true,
  interimWords: true,
  // With format_turns (on unless the agent turns it off) an ended turn's text is punctuated and cased.
  punctuation: true,
  endOfTurn: true,
  // A Turn's `utterance`, filled in at a pause before the turn ends: the eager end; more words, its resumption.
  eagerEndOfTurn: true,
  wordTimings: true,
}

interface TurnMessage {
  type?: string
  turn_order?: number
  end_of_turn?: boolean
  turn_is_formatted?: boolean
  end_of_turn_confidence?: number
  transcript?: string
  words?: { text?: string; word_is_final?: boolean }[]
  utterance?: string
  error_code?: number
  error?: string
}

/** The default model for a language: English's own, else the multilingual one. */
export const assemblyAiModelFor = (language: string) => (/^en\b/i.test(language) ? ASSEMBLYAI_MODELS[0] : ASSEMBLYAI_MODELS[1])

/** The stream's query: the audio, the model and the agent's turn settings (the vendor's defaults where unset). */
export function assemblyAiQuery(o: SpeechToTextOptions): URLSearchParams {
  const s: AssemblyAiTurnSettings = o.assemblyai ?? {}
  const query = new URLSearchParams({
    sample_rate: String(RATE),
    encoding: 'pcm_s16le',
    speech_model: o.model ?? assemblyAiModelFor(o.language),
    format_turns: String(s.formatTurns ?? true),
  })
  if (s.endOfTurnConfidence != null) query.set('end_of_turn_confidence_threshold', String(s.endOfTurnConfidence))
  // `min_turn_silence` is the SDK's name for what was `min_end_of_turn_silence_when_confident`.
  if (s.minTurnSilenceMs != null) query.set('min_turn_silence', String(s.minTurnSilenceMs))
  if (s.maxTurnSilenceMs != null) query.set('max_turn_silence', String(s.maxTurnSilenceMs))
  return query
}

/** Why a stream ended badly, from its close code and the Error frame's text. */
function failure(code: number, text: string): string {
  const hint = /concurren|too many/i.test(text) ? ' (the account is at its concurrent-session limit)' : code === 1008 || code === 4001 ? ' (the API key was rejected)' : ''
  return `AssemblyAI closed the stream (${code}${text ? ` ${text}` : ''})${hint}`
}

export class AssemblyAiStt implements SpeechToText {
  readonly name = 'assemblyai'

  constructor(private readonly options: { apiKey: string; baseUrl?: string }) {}

  async open(o: SpeechToTextOptions): Promise<SttSession> {
    const base = (this.options.baseUrl ?? 'wss://streaming.assemblyai.com').replace(/\/$/, '')
    const formatTurns = o.assemblyai?.formatTurns ?? true
    const key = this.options.apiKey
    const ws = new WebSocket(`${base}/v3/ws?${assemblyAiQuery(o)}`, { headers: { Authorization: key } })
    const clean = (m: string) => (key ? m.split(key).join('***') : m)
    let pending: Buffer[] = []
    let pendingBytes = 0
    /** Audio not yet making a whole chunk. */
    let carry = new Int16Array(0)
    /** The newest turn that started, and the newest that ended (turn_order; -1: none yet). */
    let started = -1
    let ended = -1
    /** The turn an eager end stands for (-1: none), and how many words it had then. */
    let eager = -1
    let eagerWords = 0
    /** Ended turns' text not yet returned by `finalize`, in order. */
    let endedTexts: string[] = []
    let error: SpeechError | null = null
    /** The Error frame's text, for the close that follows it. */
    let errorText = ''
    let waiter: { resolve: (t: string) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> } | null = null
    let forceOnOpen = false
    const partials: ((p: SttPartial) => void)[] = []
    const turns: ((e: SttTurnEvent) => void)[] = []
    const tell = (e: SttTurnEvent) => {
      for (const l of turns) l(e)
    }
    const take = () => {
      const text = endedTexts.join(' ').replace(/\s+/g, ' ').trim()
      endedTexts = []
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
      error ??= new SpeechError('assemblyai', clean(message))
      if (waiter) {
        clearTimeout(waiter.timer)
        waiter.reject(error)
        waiter = null
      }
    }
    const send = (chunk: Int16Array) => {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      if (ws.readyState === WebSocket.OPEN) return ws.send(bytes)
      pending.push(Buffer.from(bytes))
      pendingBytes += bytes.length
      while (pendingBytes > MAX_PENDING_BYTES && pending.length > 1) pendingBytes -= pending.shift()!.length
    }
    /** Sends what is held as one chunk, padded with silence to the least length the vendor takes. */
    const flushCarry = () => {
      if (!carry.length) return
      const chunk = new Int16Array(Math.max(CHUNK_SAMPLES, carry.length))
      chunk.set(carry)
      carry = new Int16Array(0)
      send(chunk)
    }
    const forceEndpoint = () => {
      flushCarry()
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'ForceEndpoint' }))
      else forceOnOpen = true
    }

    ws.on('unexpected-response', (_req, res) => fail(`AssemblyAI refused the stream: HTTP ${res.statusCode}${res.statusCode === 401 ? ' (the API key was rejected)' : ''}`))
    ws.on('error', (err) => fail(`AssemblyAI stream error: ${err.message}`))
    ws.on('close', (code, reason) => {
      if (code !== 1000) fail(failure(code, errorText || String(reason)))
      else settle()
    })
    ws.on('open', () => {
      for (const b of pending) ws.send(b)
      pending = []
      pendingBytes = 0
      if (forceOnOpen) ws.send(JSON.stringify({ type: 'ForceEndpoint' }))
      forceOnOpen = false
    })
    ws.on('message', (data, binary) => {
      if (binary) return
      let m: TurnMessage
      try {
        m = JSON.parse(String(data))
      } catch {
        return
      }
      // The Error frame comes just before the close with the same code; its text is the reason.
      if (m.type === 'Error' || (m.type === undefined && typeof m.error === 'string')) {
        errorText = m.error ?? ''
        return
      }
      if (m.type === 'Termination') return settle()
      if (m.type !== 'Turn' || typeof m.turn_order !== 'number') return
      const order = m.turn_order
      const words = m.words ?? []
      const text = (m.turn_is_formatted ? (m.transcript ?? '') : words.map((w) => w.text ?? '').join(' ') || (m.transcript ?? '')).replace(/\s+/g, ' ').trim()
      if (order > started && !(m.end_of_turn && !text)) {
        started = order
        tell({ type: 'start' })
      }
      if (order <= ended) return
      if (!m.end_of_turn && order === started) {
        if (eager === order && words.length > eagerWords) {
          eager = -1
          tell({ type: 'resumed' })
        } else if (eager !== order && m.utterance && text) {
          eager = order
          eagerWords = words.length
          tell({ type: 'eager-end', text, confidence: m.end_of_turn_confidence })
        }
      }
      // With format_turns the end comes twice, plain then formatted: the formatted one ends the turn.
      if (m.end_of_turn && (m.turn_is_formatted || !formatTurns)) {
        ended = order
        eager = -1
        if (text) endedTexts.push(text)
        if (text) for (const l of partials) l({ text, stable: true, endOfSpeech: true })
        if (order === started) tell({ type: 'end', text, confidence: m.end_of_turn_confidence })
        return settle()
      }
      if (text) for (const l of partials) l({ text, stable: !!m.end_of_turn || words.every((w) => w.word_is_final), endOfSpeech: !!m.end_of_turn })
    })
    return {
      sampleRate: RATE,
      capabilities: ASSEMBLYAI_CAPABILITIES,
      push(pcm) {
        if (error) return
        const all = new Int16Array(carry.length + pcm.length)
        all.set(carry)
        all.set(pcm, carry.length)
        let at = 0
        for (; at + CHUNK_SAMPLES <= all.length; at += CHUNK_SAMPLES) send(all.slice(at, at + CHUNK_SAMPLES))
        carry = all.slice(at)
      },
      finalize() {
        if (error) return Promise.reject(error)
        if (waiter) settle()
        if (started <= ended && endedTexts.length) return Promise.resolve(take())
        return new Promise<string>((resolve, reject) => {
          waiter = { resolve, reject, timer: setTimeout(settle, FINALIZE_WAIT_MS) }
          forceEndpoint()
        })
      },
      onPartial(listener) {
        partials.push(listener)
      },
      onTurn(listener) {
        turns.push(listener)
      },
      async close() {
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(JSON.stringify({ type: 'Terminate' }))
          ws.close(1000)
        } else if (ws.readyState === WebSocket.CONNECTING) ws.terminate()
      },
    }
  }
}
