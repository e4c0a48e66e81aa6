/**
 * A local Cartesia API (https://docs.cartesia.ai/api-reference/tts/websocket, contexts and flushes:
 * https://docs.cartesia.ai/build-with-cartesia/capability-guides/stream-inputs-using-continuations;
 * the message types as the SDK's `cartesia-ai/cartesia-js/src/resources/tts.ts` declares them):
 * - `GET /tts/websocket` upgraded with `Authorization: Bearer <key>` (or `X-API-Key`, or
 *   `?api_key=`) and a `Cartesia-Version` (or `?cartesia_version=`); a wrong key is a 401, a missing
 *   version a 400, `busy` a 429, each before the upgrade with a JSON `{ error, message }` body;
 * - JSON requests `{ context_id, model_id, voice: { mode: 'id', id }, output_format, transcript,
 *   continue, flush?, add_timestamps? }` and `{ context_id, cancel: true }`. Text sent with
 *   `continue: true` waits; a `flush` speaks what waits and ends with `flush_done` (its `flush_id`
 *   counting from 1, chunks tagged with it); `continue: false` speaks the rest and ends with `done`.
 *   (The real service may also start on its own after `max_buffer_delay_ms`; the adapter flushes
 *   every sentence, so this fake waits for the flush.)
 * - `chunk` messages carry base64 audio (`pcm_mulaw` or `pcm_s16le` at the asked rate) of a tone,
 *   `wordMs` a character (plus `wordBaseMs` a word) with a 40 ms gap between words; `timestamps` messages follow the chunk in
 *   which words end, `word_timestamps: { words, start, end }` in seconds from the context's start;
 * - a cancelled context sends nothing more; `error` messages (`{ type: 'error', context_id,
 *   status_code, title, message, done: true }`) for a bad request, a context past `maxContexts`
 *   (429), and `failAfterChunks` (500 mid-stream); `dropAfterChunks` closes the socket mid-stream;
 * - `GET /voices` (cursor pages: `data`, `has_more`, `starting_after`) and `POST /tts/bytes` (WAV).
 */
import type { ServerWebSocket } from 'bun'

export interface CartesiaFakeOptions {
  /** Wall-clock ms from a flush (or the final request) to its first chunk. Realistic: `REALISTIC.cartesiaFirstAudioMs`. */
  firstAudioMs?: number
  /** Audio ms a chunk holds (Cartesia's own chunking is not published); 20 by default. */
  chunkMs?: number
  /** How many times faster than real time chunks come; 0 (the default): all at once. */
  speedup?: number
  /** Audio ms a character of text takes; 60 by default. */
  wordMs?: number
  /** Audio ms every word takes besides its characters; 0 by default (speech is not as even as that: a line test sets it). */
  wordBaseMs?: number
}

export interface CartesiaFake {
  url: string
  /** Every request received on every socket, parsed. */
  requests: any[]
  /** Upgrade attempts and their status. */
  upgrades: { status: number; headers: Record<string, string> }[]
  /** Contexts cancelled (nothing more is sent for them). */
  cancelled: string[]
  /** Chunks sent per context. */
  chunks: Record<string, number>
  /** Refuse upgrades with a 429 while set. */
  busy: boolean
  /** Contexts at once a socket may have before a new one gets a 429 error (unlimited when unset). */
  maxContexts?: number
  /** The next context fails with a 500 error after this many chunks (then it is cleared). */
  failAfterChunks?: number
  /** The next socket closes (1011, as a server that fails) after sending this many chunks (then it is cleared). */
  dropAfterChunks?: number
  voices: { id: string; name: string }[]
  sockets: number
  stop(): void
}

interface Ctx {
  id: string
  pending: string
  flushes: number
  seconds: number
  cancelled: boolean
  chain: Promise<void>
  options: any
  failAfter?: number
}

interface Sock {
  contexts: Map<string, Ctx>
}

const wav = (samples: Int16Array, rate: number) => {
  const out = new Uint8Array(44 + samples.byteLength)
  const v = new DataView(out.buffer)
  const s = (o: number, t: string) => {
    for (let i = 0; i < t.length; i++) v.setUint8(o + i, t.charCodeAt(i))
  }
  s(0, 'RIFF')
  v.setUint32(4, 36 + samples.byteLength, true)
  s(8, 'WAVEfmt ')
  v.setUint32(16, 16, true)
  v.setUint16(20, 1, true)
  v.setUint16(22, 1, true)
  v.setUint32(24, rate, true)
  v.setUint32(28, rate * 2, true)
  v.setUint16(32, 2, true)
  v.setUint16(34, 16, true)
  s(36, 'data')
  v.setUint32(40, samples.byteLength, true)
  out.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength), 44)
  return out
}

/** G.711 mu-law of one sample (ITU-T G.711's segment encoding). */
function mulawOf(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0
  let x = Math.min(32635, Math.abs(sample)) + 0x84
  let exp = 7
  for (let mask = 0x4000; (x & mask) === 0 && exp > 0; mask >>= 1) exp--
  const mantissa = (x >> (exp + 3)) & 0x0f
  x = ~(sign | (exp << 4) | mantissa)
  return x & 0xff
}

export function startCartesiaFake(apiKey: string, options: CartesiaFakeOptions = {}): CartesiaFake {
  const chunkMs = options.chunkMs ?? 20
  const wordMs = options.wordMs ?? 60
  const gapMs = 40
  const fake: CartesiaFake = {
    url: '',
    requests: [],
    upgrades: [],
    cancelled: [],
    chunks: {},
    busy: false,
    voices: [
      { id: 'f786b574-daa5-4673-aa0c-cbe3e8534c02', name: 'Katie' },
      { id: 'a0e99841-438c-4a64-b679-ae501e7d6091', name: 'Barbershop Man' },
    ],
    sockets: 0,
    stop: () => server.stop(true),
  }
  const authorised = (req: Request, u: URL) => req.headers.get('authorization') === `Bearer ${apiKey}` || req.headers.get('x-api-key') === apiKey || u.searchParams.get('api_key') === apiKey
  const versioned = (req: Request, u: URL) => !!(req.headers.get('cartesia-version') ?? u.searchParams.get('cartesia_version'))
  const refuse = (status: number, error: string, message: string) => Response.json({ error, message }, { status })

  const send = (ws: ServerWebSocket<Sock>, m: unknown) => ws.readyState === 1 && ws.send(JSON.stringify(m))
  const fail = (ws: ServerWebSocket<Sock>, ctx: string | undefined, status: number, title: string, message: string) =>
    send(ws, { type: 'error', context_id: ctx, status_code: status, title, message, done: true })

  /** Speaks `text` on the context: chunks paced, timestamps after the chunk where words end. */
  async function speak(ws: ServerWebSocket<Sock>, ctx: Ctx, text: string, flushId: number | null): Promise<void> {
    const { encoding, sample_rate: rate } = ctx.options.output_format
    const words = text.split(/\s+/).filter(Boolean)
    const samples: number[] = []
    const timed: { word: string; start: number; end: number; at: number }[] = []
    for (const word of words) {
      const start = ctx.seconds + samples.length / rate
      for (let i = 0, n = Math.round((((options.wordBaseMs ?? 0) + word.length * wordMs) * rate) / 1000); i < n; i++)
        samples.push(Math.round(8000 * Math.sin((2 * Math.PI * 440 * samples.length) / rate)))
      timed.push({ word, start, end: ctx.seconds + samples.length / rate, at: samples.length })
      for (let i = 0, n = Math.round((gapMs * rate) / 1000); i < n; i++) samples.push(0)
    }
    if (options.firstAudioMs) await Bun.sleep(options.firstAudioMs)
    const per = Math.round((chunkMs * rate) / 1000)
    for (let at = 0; at < samples.length; at += per) {
      if (ctx.cancelled || ws.readyState !== 1) return
      const piece = samples.slice(at, at + per)
      const bytes = encoding === 'pcm_mulaw' ? Uint8Array.from(piece, mulawOf) : new Uint8Array(Int16Array.from(piece).buffer)
      send(ws, { type: 'chunk', context_id: ctx.id, data: Buffer.from(bytes).toString('base64'), done: false, status_code: 206, step_time: 1, ...(flushId ? { flush_id: flushId } : {}) })
      fake.chunks[ctx.id] = (fake.chunks[ctx.id] ?? 0) + 1
      if (fake.dropAfterChunks !== undefined && fake.chunks[ctx.id]! >= fake.dropAfterChunks) {
        fake.dropAfterChunks = undefined
        ws.close(1011, 'internal error')
        return
      }
      if (ctx.failAfter !== undefined && fake.chunks[ctx.id]! >= ctx.failAfter) {
        ctx.cancelled = true
        ws.data.contexts.delete(ctx.id)
        fail(ws, ctx.id, 500, 'Internal server error', 'the generation failed')
        return
      }
      const ended = timed.filter((w) => w.at > at && w.at <= at + per)
      if (ended.length && ctx.options.add_timestamps)
        send(ws, {
          type: 'timestamps',
          context_id: ctx.id,
          done: false,
          status_code: 206,
          word_timestamps: { words: ended.map((w) => w.word), start: ended.map((w) => w.start), end: ended.map((w) => w.end) },
          ...(flushId ? { flush_id: flushId } : {}),
        })
      if (options.speedup) await Bun.sleep(chunkMs / options.speedup)
    }
    ctx.seconds += samples.length / rate
  }

  function request(ws: ServerWebSocket<Sock>, m: any): void {
    const contexts = ws.data.contexts
    if (m.cancel) {
      const ctx = contexts.get(m.context_id)
      if (ctx) ctx.cancelled = true
      contexts.delete(m.context_id)
      fake.cancelled.push(m.context_id)
      return
    }
    const bad = !m.context_id
      ? 'context_id is required'
      : !m.model_id
        ? 'model_id is required'
        : m.voice?.mode !== 'id' || !m.voice?.id
          ? 'voice must be { mode: "id", id }'
          : m.output_format?.container !== 'raw' || !['pcm_mulaw', 'pcm_s16le'].includes(m.output_format?.encoding) || ![8000, 16000, 22050, 24000, 44100].includes(m.output_format?.sample_rate)
            ? 'output_format is not valid'
            : typeof m.transcript !== 'string'
              ? 'transcript is required'
              : null
    if (bad) return void fail(ws, m.context_id, 400, 'Invalid request', bad)
    let ctx = contexts.get(m.context_id)
    if (!ctx) {
      if (fake.maxContexts !== undefined && contexts.size >= fake.maxContexts) return void fail(ws, m.context_id, 429, 'Concurrency limit exceeded', 'too many concurrent contexts for your plan')
      ctx = { id: m.context_id, pending: '', flushes: 0, seconds: 0, cancelled: false, chain: Promise.resolve(), options: m, failAfter: fake.failAfterChunks }
      fake.failAfterChunks = undefined
      contexts.set(ctx.id, ctx)
    }
    const c = ctx
    c.pending += m.transcript
    if (m.flush) {
      const text = c.pending
      c.pending = ''
      const id = ++c.flushes
      c.chain = c.chain.then(async () => {
        await speak(ws, c, text, id)
        if (!c.cancelled) send(ws, { type: 'flush_done', context_id: c.id, done: false, flush_done: true, flush_id: id, status_code: 206 })
      })
    } else if (m.continue === false) {
      const text = c.pending
      c.pending = ''
      c.chain = c.chain.then(async () => {
        await speak(ws, c, text, null)
        if (c.cancelled) return
        contexts.delete(c.id)
        send(ws, { type: 'done', context_id: c.id, done: true, status_code: 206 })
      })
    }
  }

  const server = Bun.serve<Sock, never>({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req, srv) {
      const u = new URL(req.url)
      if (u.pathname === '/tts/websocket') {
        const headers = Object.fromEntries(req.headers)
        const status = !authorised(req, u) ? 401 : !versioned(req, u) ? 400 : fake.busy ? 429 : 101
        fake.upgrades.push({ status, headers })
        if (status === 401) return refuse(401, 'Unauthorized', 'Invalid API key')
        if (status === 400) return refuse(400, 'Bad Request', 'Cartesia-Version is required')
        if (status === 429) return refuse(429, 'Too Many Requests', 'concurrency limit reached')
        return srv.upgrade(req, { data: { contexts: new Map() } }) ? undefined : new Response('upgrade failed', { status: 400 })
      }
      if (!authorised(req, u)) return refuse(401, 'Unauthorized', 'Invalid API key')
      if (!versioned(req, u)) return refuse(400, 'Bad Request', 'Cartesia-Version is required')
      if (fake.busy) return refuse(429, 'Too Many Requests', 'rate limit reached')
      if (req.method === 'GET' && u.pathname === '/voices') {
        const limit = Number(u.searchParams.get('limit') ?? 10)
        const after = u.searchParams.get('starting_after')
        const from = after ? fake.voices.findIndex((v) => v.id === after) + 1 : 0
        const data = fake.voices
          .slice(from, from + limit)
          .map((v) => ({ ...v, description: '', language: 'en', is_public: true, is_owner: false, created_at: '2025-01-01T00:00:00Z', preview_file_url: null }))
        return Response.json({ data, has_more: from + limit < fake.voices.length })
      }
      if (req.method === 'POST' && u.pathname === '/tts/bytes') {
        const body = (await req.json()) as any
        const rate = body.output_format?.sample_rate ?? 24000
        const tone = Int16Array.from({ length: Math.round((String(body.transcript).length * wordMs * rate) / 1000) }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)))
        return new Response(wav(tone, rate), { headers: { 'content-type': 'audio/wav' } })
      }
      return refuse(404, 'Not Found', `no route ${u.pathname}`)
    },
    websocket: {
      open() {
        fake.sockets++
      },
      message(ws, raw) {
        let m: any
        try {
          m = JSON.parse(String(raw))
        } catch {
          return void fail(ws, undefined, 400, 'Invalid request', 'the message is not JSON')
        }
        fake.requests.push(m)
        request(ws, m)
      },
      close(ws) {
        fake.sockets--
        for (const c of ws.data.contexts.values()) c.cancelled = true
      },
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}
