/**
 * Cartesia streaming text-to-speech over one WebSocket a call
 * (https://docs.cartesia.ai/api-reference/tts/websocket; contexts and continuations:
 * https://docs.cartesia.ai/build-with-cartesia/capability-guides/stream-inputs-using-continuations;
 * checked against the SDK's `cartesia-ai/cartesia-js/src/internal/lib/tts/ws.ts` and
 * `cartesia-ai/cartesia-js/src/resources/tts.ts`):
 * - `wss://api.cartesia.ai/tts/websocket` with `Authorization: Bearer <key>` and `Cartesia-Version`
 *   on the upgrade (the SDK's Node path; a refused key or a rate limit is the upgrade's HTTP status);
 * - an agent turn is one `context_id`: each sentence goes as `{ transcript, continue: true }` then a
 *   flush (`{ transcript: '', continue: true, flush: true }`), whose `flush_done` ends that sentence's
 *   audio; the turn's end sends `{ transcript: '', continue: false }`, answered by `done`. Text with
 *   no turn is one request with `continue: false`, ended by `done`;
 * - every request repeats `model_id`, `voice: { mode: 'id', id }`, `language` and
 *   `output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 }`: the phone
 *   line's own coding, so decoding here and encoding at the line gives back Cartesia's bytes (G.711
 *   round-trips exactly) and nothing is resampled;
 * - `add_timestamps: true`, `use_normalized_timestamps: false`: `timestamps` messages carry
 *   `word_timestamps: { words, start, end }` in seconds from the start of the context's audio, the
 *   words as written; they are reported per sentence, from the start of its own audio;
 * - barge-in (the signal) sends `{ context_id, cancel: true }`; audio still on its way for that
 *   context is dropped;
 * - `chunk` carries base64 audio in `data`; `error` carries `status_code`, `title`, `message` (older
 *   versions: `error`) and ends its context, or every context when it names none.
 */
import { mulaw } from 'alawmulaw'
import WebSocket from 'ws'
import type { SynthesisOptions, TextToSpeech, WordTiming } from '../../voice/public'
import { SpeechError } from '../../voice/public'
import { VOICE_MAP } from './voices'

/** The API version the SDK pins (cartesia-js `client-identity.ts`). */
export const CARTESIA_VERSION = '2025-11-04'
export const DEFAULT_MODEL = 'sonic-3'
/** The voice Cartesia's real-time quickstart speaks with; used when the agent's voice is one of ours. */
export const DEFAULT_VOICE = 'f786b574-daa5-4673-aa0c-cbe3e8534c02'
/** A handshake takes a round trip or two (~100–300 ms); 10 s is a service that is not answering. */
export const CONNECT_TIMEOUT_MS = 10_000
/** Cartesia's first audio comes in ~40–200 ms; 10 s without a message is a stalled generation. */
export const SILENCE_TIMEOUT_MS = 10_000
const RATE = 8_000

interface Sentence {
  audio: Int16Array[]
  over: boolean
  failure: Error | null
  /** Seconds of the context's audio before this sentence (its timestamps count from the context's start). */
  from: number
  onWords?: (words: WordTiming[]) => void
  wake: (() => void) | null
}

interface Context {
  id: string
  sentence: Sentence | null
  samples: number
  cancel: () => void
}

type Message = {
  type?: string
  context_id?: string
  data?: string
  status_code?: number
  title?: string
  message?: string
  error?: string
  word_timestamps?: { words?: string[]; start?: number[]; end?: number[] }
}

const aborted = () => new DOMException('synthesis aborted', 'AbortError')

export class CartesiaTts implements TextToSpeech {
  readonly name = 'cartesia'
  readonly sampleRate = RATE
  private socket: Promise<WebSocket> | null = null
  private readonly contexts = new Map<string, Context>()
  private readonly turns = new Map<string, Context>()
  private seq = 0

  constructor(private readonly options: { apiKey: string; baseUrl?: string; model?: string | null }) {}

  async *synthesize(text: string, o: SynthesisOptions): AsyncIterable<Int16Array> {
    if (o.signal?.aborted) throw aborted()
    const ws = await this.connect()
    const ctx = this.context(ws, o)
    const sentence: Sentence = { audio: [], over: false, failure: null, from: ctx.samples / RATE, onWords: o.onWords, wake: null }
    ctx.sentence = sentence
    const base = this.request(ctx.id, o)
    if (o.turn) {
      this.send(ws, { ...base, transcript: `${text} `, continue: true })
      this.send(ws, { ...base, transcript: '', continue: true, flush: true })
    } else this.send(ws, { ...base, transcript: text, continue: false })
    try {
      for (;;) {
        if (o.signal?.aborted) throw aborted()
        const next = sentence.audio.shift()
        if (next) {
          ctx.samples += next.length
          yield next
          continue
        }
        if (sentence.failure) throw sentence.failure
        if (sentence.over) return
        await this.wait(sentence, o.signal)
      }
    } finally {
      if (ctx.sentence === sentence) ctx.sentence = null
    }
  }

  /** The socket goes with the call. */
  close(): void {
    const socket = this.socket
    this.socket = null
    this.failAll(new SpeechError('cartesia', 'the call is over'))
    void socket?.then((ws) => ws.close(1000)).catch(() => {})
  }

  /** The turn's context (opened on its first sentence, ended when the turn has no more text), or one for this text alone. */
  private context(ws: WebSocket, o: SynthesisOptions): Context {
    const open = o.turn && this.turns.get(o.turn.id)
    if (open) return open
    const ctx: Context = { id: `${o.turn?.id ?? 'text'}-${++this.seq}`, sentence: null, samples: 0, cancel: () => {} }
    this.contexts.set(ctx.id, ctx)
    const onAbort = () => {
      if (!this.contexts.delete(ctx.id)) return
      this.send(ws, { context_id: ctx.id, cancel: true })
      ctx.sentence?.wake?.()
    }
    o.signal?.addEventListener('abort', onAbort, { once: true })
    ctx.cancel = () => o.signal?.removeEventListener('abort', onAbort)
    if (o.turn) {
      const turn = o.turn
      this.turns.set(turn.id, ctx)
      void turn.ended.then(() => {
        this.turns.delete(turn.id)
        if (this.contexts.has(ctx.id)) this.send(ws, { ...this.request(ctx.id, o), transcript: '', continue: false })
      })
    }
    return ctx
  }

  private request(contextId: string, o: SynthesisOptions) {
    const voice = Object.hasOwn(VOICE_MAP, o.voice) ? DEFAULT_VOICE : o.voice
    return {
      context_id: contextId,
      model_id: o.model ?? this.options.model ?? DEFAULT_MODEL,
      voice: { mode: 'id', id: voice },
      language: o.language.split('-')[0]!.toLowerCase(),
      output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: RATE },
      add_timestamps: true,
      use_normalized_timestamps: false,
      ...(o.speed == null ? {} : { generation_config: { speed: o.speed } }),
    }
  }

  private send(ws: WebSocket, message: unknown): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message))
  }

  private wait(sentence: Sentence, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        sentence.failure ??= new SpeechError('cartesia', `no audio for ${SILENCE_TIMEOUT_MS / 1000} s`)
        sentence.wake?.()
      }, SILENCE_TIMEOUT_MS)
      sentence.wake = () => {
        clearTimeout(timer)
        sentence.wake = null
        resolve()
      }
      if (signal?.aborted) sentence.wake()
    })
  }

  private connect(): Promise<WebSocket> {
    if (this.socket) return this.socket
    const socket: Promise<WebSocket> = this.open(() => this.socket === socket).catch((err: Error) => {
      if (this.socket === socket) this.socket = null
      throw err
    })
    this.socket = socket
    return socket
  }

  /** `current`: whether this socket is still the adapter's (a closed one replaced by a reconnect is not). */
  private open(current: () => boolean): Promise<WebSocket> {
    const base = (this.options.baseUrl ?? 'wss://api.cartesia.ai').replace(/^http/, 'ws').replace(/\/$/, '')
    const key = this.options.apiKey
    const hide = (m: string) => (key ? m.split(key).join('***') : m)
    const ws = new WebSocket(`${base}/tts/websocket`, { headers: { Authorization: `Bearer ${key}`, 'Cartesia-Version': CARTESIA_VERSION }, handshakeTimeout: CONNECT_TIMEOUT_MS })
    ws.on('message', (data) => {
      let m: Message
      try {
        m = JSON.parse(String(data)) as Message
      } catch {
        return
      }
      this.receive(m)
    })
    ws.on('close', () => {
      if (!current()) return
      this.socket = null
      this.failAll(new SpeechError('cartesia', 'the connection closed'))
    })
    return new Promise<WebSocket>((resolve, reject) => {
      ws.once('open', () => resolve(ws))
      ws.once('unexpected-response', (_req, res) => {
        let body = ''
        res.on('data', (c: Buffer) => (body += c))
        res.on('end', () => reject(new SpeechError('cartesia', hide(`${res.statusCode}: ${reasonOf(body) ?? res.statusMessage}`))))
        res.on('error', () => reject(new SpeechError('cartesia', `${res.statusCode}: ${res.statusMessage}`)))
      })
      ws.once('error', (err) => reject(new SpeechError('cartesia', hide(`the connection failed: ${err.message}`))))
    })
  }

  private receive(m: Message): void {
    if (m.type === 'error' && !m.context_id) {
      this.failAll(new SpeechError('cartesia', `${m.status_code ?? 'error'}: ${reasonOf(m) ?? 'failed'}`))
      return
    }
    const ctx = m.context_id ? this.contexts.get(m.context_id) : undefined
    // A cancelled or finished context's late messages.
    if (!ctx) return
    const s = ctx.sentence
    if (m.type === 'chunk' && s && m.data) s.audio.push(mulaw.decode(Buffer.from(m.data, 'base64')))
    else if (m.type === 'timestamps' && s?.onWords) s.onWords(wordsOf(m, s.from))
    else if (m.type === 'flush_done' && s) s.over = true
    else if (m.type === 'done') {
      if (s) s.over = true
      this.end(ctx)
    } else if (m.type === 'error') {
      if (s) s.failure = new SpeechError('cartesia', `${m.status_code ?? 'error'}: ${reasonOf(m) ?? 'failed'}`)
      this.end(ctx)
    }
    s?.wake?.()
  }

  private end(ctx: Context): void {
    this.contexts.delete(ctx.id)
    ctx.cancel()
    for (const [turn, c] of this.turns) if (c === ctx) this.turns.delete(turn)
  }

  private failAll(err: Error): void {
    for (const ctx of [...this.contexts.values()]) {
      if (ctx.sentence) ctx.sentence.failure ??= err
      ctx.sentence?.wake?.()
      this.end(ctx)
    }
  }
}

function wordsOf(m: Message, from: number): WordTiming[] {
  const w = m.word_timestamps
  const words = w?.words ?? []
  return words.map((word, i) => ({ word, start: (w?.start?.[i] ?? 0) - from, end: (w?.end?.[i] ?? 0) - from }))
}

/** The reason in an error message or a refused upgrade's body (`message`, `error` or `title`). */
function reasonOf(body: string | Message): string | null {
  let m: Message | null = null
  if (typeof body === 'string') {
    try {
      m = JSON.parse(body) as Message
    } catch {
      return body.trim() || null
    }
  } else m = body
  return m?.message ?? m?.error ?? m?.title ?? null
}
