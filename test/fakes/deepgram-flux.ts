/**
 * A local Deepgram Flux server (https://developers.deepgram.com/docs/flux/quickstart): `GET
 * /v2/listen?model=flux-…&encoding=linear16&sample_rate=…` upgraded to a WebSocket with
 * `Authorization: Token <key>` (401 otherwise; 429 past `maxStreams` streams at once; 400 for a
 * model, encoding or end-of-turn setting out of its documented range,
 * https://developers.deepgram.com/docs/flux/configuration), binary 16-bit PCM or μ-law in, Flux's JSON out,
 * driven by the audio as the live API is:
 * - `Connected` first; speech and silence from the audio's energy (20 ms windows above 0.01 of full
 *   scale, as test/fakes/deepgram.ts). It recognises no words: tests queue the text each stretch of
 *   speech says, and whether the caller's turn is over at the silence after it (`ends`, the
 *   model's confidence passing `eot_threshold`);
 * - `TurnInfo` events (https://developers.deepgram.com/docs/flux/state): StartOfTurn at a turn's
 *   first speech, Update every 250 ms of speech, EagerEndOfTurn `eagerSilenceMs` into a silence
 *   when `eager_eot_threshold` is set, TurnResumed when speech comes after it, EndOfTurn
 *   `endSilenceMs` into the silence after a stretch that `ends` (else after `eot_timeout_ms`), its
 *   transcript the eager end's; `turn_index` goes up after each end;
 * - `failStreams(reason)`: a fatal `Error` (`code`, `description`), then the socket closes 1011;
 * - `CloseStream` closes the socket (1000).
 * Time is audio time; each message leaves `latencyMs` after the audio that caused it.
 */
import { mulaw } from 'alawmulaw'

export interface FluxFakeOptions {
  /**
   * Silence into a pause before EagerEndOfTurn, ms of audio (with `eager_eot_threshold`); a shorter
   * gap is inside a stretch of speech. Deepgram publishes no figure: 200 ms, before the end's 260.
   */
  eagerSilenceMs?: number
  /** Silence into a pause before EndOfTurn for a stretch that `ends`: Flux's "~260 ms end-of-turn detection" (quickstart). */
  endSilenceMs?: number
  /** Wall-clock ms from the audio to the message about it (the network and the model). */
  latencyMs?: number
  /** Streams open at once past which the upgrade is refused 429 (Deepgram's concurrency limit). */
  maxStreams?: number
}

export interface FluxUtterance {
  text: string
  /** The caller's turn is over at the silence after this stretch (default true). */
  ends?: boolean
}

export interface FluxFake {
  url: string
  /** Query of each stream opened. */
  streams: Record<string, string>[]
  /** Every TurnInfo event sent, in order, and the controls received. */
  events: string[]
  controls: string[]
  /** Text for the next stretches of speech, in order. */
  utterances: (string | FluxUtterance)[]
  /** Streams opened now. */
  open: number
  failStreams(description: string): void
  stop(): void
}

const WINDOW_MS = 20
const SPEECH_LEVEL = 0.01 * 32768
const UPDATE_MS = 250
/** The model names `GET /v1/models` lists: Flux beside a classic one. */
export const FLUX_FAKE_MODELS = ['flux-general-en', 'nova-3']

interface Stream {
  query: Record<string, string>
  requestId: string
  rate: number
  /** Bytes a sample: 2 for linear16, 1 for mulaw. */
  width: number
  eager: boolean
  timeoutMs: number
  carry: Uint8Array
  now: number
  seq: number
  turnIndex: number
  /** The turn in progress: its words so far, whether its last stretch ends it, and where it stands. */
  turn: { words: string[]; ends: boolean; state: 'speaking' | 'eager' | 'paused'; silenceMs: number; nextUpdate: number; stretch: boolean } | null
  closed: boolean
}

const inRange = (v: string | undefined, min: number, max: number) => v === undefined || (Number.isFinite(Number(v)) && Number(v) >= min && Number(v) <= max)

export function startFluxFake(key: string, options: FluxFakeOptions = {}): FluxFake {
  const eagerSilenceMs = options.eagerSilenceMs ?? 200
  const endSilenceMs = options.endSilenceMs ?? 260
  const latencyMs = options.latencyMs ?? 0
  type Ws = import('bun').ServerWebSocket<Stream>
  const sockets = new Set<Ws>()
  const fake: FluxFake = {
    url: '',
    streams: [],
    events: [],
    controls: [],
    utterances: [],
    open: 0,
    failStreams(description) {
      for (const ws of sockets) {
        ws.send(JSON.stringify({ type: 'Error', sequence_id: ++ws.data.seq, code: 'INTERNAL_SERVER_ERROR', description }))
        ws.data.closed = true
        ws.close(1011, description.slice(0, 100))
      }
    },
    stop: () => server.stop(true),
  }
  const send = (ws: Ws, message: object) => {
    const data = JSON.stringify(message)
    const go = () => void (!ws.data.closed && ws.send(data))
    if (latencyMs > 0) setTimeout(go, latencyMs)
    else go()
  }
  const turnInfo = (ws: Ws, event: string, confidence: number) => {
    const s = ws.data
    fake.events.push(event)
    const words = s.turn?.words ?? []
    send(ws, {
      type: 'TurnInfo',
      request_id: s.requestId,
      sequence_id: ++s.seq,
      event,
      turn_index: s.turnIndex,
      audio_window_start: 0,
      audio_window_end: s.now / 1000,
      transcript: words.join(' '),
      words: words.map((word) => ({ word, confidence: 0.97 })),
      end_of_turn_confidence: confidence,
    })
  }
  const onWindow = (ws: Ws, speech: boolean) => {
    const s = ws.data
    s.now += WINDOW_MS
    if (speech) {
      if (!s.turn) {
        s.turn = { words: [], ends: true, state: 'speaking', silenceMs: 0, nextUpdate: UPDATE_MS, stretch: false }
        turnInfo(ws, 'StartOfTurn', 0.01)
      }
      const t = s.turn
      if (!t.stretch) {
        const next = fake.utterances.shift() ?? ''
        const u = typeof next === 'string' ? { text: next } : next
        t.words.push(...u.text.split(/\s+/).filter(Boolean))
        t.ends = u.ends ?? true
        t.stretch = true
        if (t.state === 'eager') turnInfo(ws, 'TurnResumed', 0.2)
      }
      t.state = 'speaking'
      t.silenceMs = 0
      t.nextUpdate -= WINDOW_MS
      if (t.nextUpdate <= 0) {
        t.nextUpdate = UPDATE_MS
        turnInfo(ws, 'Update', 0.05)
      }
      return
    }
    const t = s.turn
    if (!t) return
    t.silenceMs += WINDOW_MS
    // A gap shorter than an eager end's is inside the stretch (a stop consonant, a breath between words).
    if (t.silenceMs >= eagerSilenceMs) t.stretch = false
    const endAt = t.ends ? endSilenceMs : s.timeoutMs
    if (s.eager && t.state === 'speaking' && t.silenceMs >= eagerSilenceMs && t.words.length && t.silenceMs < endAt) {
      t.state = 'eager'
      turnInfo(ws, 'EagerEndOfTurn', 0.55)
    }
    if (t.silenceMs >= endAt) {
      turnInfo(ws, 'EndOfTurn', t.ends ? 0.85 : 0.3)
      s.turn = null
      s.turnIndex++
    }
  }

  const server = Bun.serve<Stream, never>({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      const u = new URL(req.url)
      const authorised = req.headers.get('authorization') === `Token ${key}`
      if (req.method === 'GET' && u.pathname === '/v1/projects') {
        if (!authorised) return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 })
        return Response.json({ projects: [{ project_id: 'proj-1', name: 'Test project' }] })
      }
      if (req.method === 'GET' && u.pathname === '/v1/models') {
        return Response.json({
          stt: FLUX_FAKE_MODELS.map((name, i) => ({
            name,
            canonical_name: name,
            architecture: name.split('-')[0],
            languages: ['en'],
            version: '2025-10-01',
            uuid: `uuid-${i}`,
            batch: !name.startsWith('flux'),
            streaming: true,
          })),
          tts: [],
        })
      }
      if (u.pathname !== '/v2/listen') return new Response('not found', { status: 404 })
      if (!authorised) return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 })
      if (options.maxStreams !== undefined && fake.open >= options.maxStreams) return Response.json({ err_code: 'TOO_MANY_REQUESTS', err_msg: 'Too many concurrent requests.' }, { status: 429 })
      const q = Object.fromEntries(u.searchParams)
      const bad = !q.model?.startsWith('flux-')
        ? 'model'
        : !['linear16', 'mulaw'].includes(q.encoding ?? '')
          ? 'encoding'
          : !q.sample_rate
            ? 'sample_rate'
            : !inRange(q.eot_threshold, 0.5, 1)
              ? 'eot_threshold'
              : !inRange(q.eager_eot_threshold, 0.3, 0.9)
                ? 'eager_eot_threshold'
                : !inRange(q.eot_timeout_ms, 500, 60_000)
                  ? 'eot_timeout_ms'
                  : null
      if (bad) return Response.json({ err_code: 'Bad Request', err_msg: `Invalid ${bad}.` }, { status: 400 })
      fake.streams.push(q)
      const data: Stream = {
        query: q,
        requestId: crypto.randomUUID(),
        rate: Number(q.sample_rate),
        width: q.encoding === 'mulaw' ? 1 : 2,
        eager: q.eager_eot_threshold !== undefined,
        timeoutMs: Number(q.eot_timeout_ms ?? 5000),
        carry: new Uint8Array(0),
        now: 0,
        seq: 0,
        turnIndex: 0,
        turn: null,
        closed: false,
      }
      return srv.upgrade(req, { data }) ? undefined : new Response('upgrade failed', { status: 400 })
    },
    websocket: {
      open(ws) {
        sockets.add(ws)
        fake.open++
        ws.send(JSON.stringify({ type: 'Connected', request_id: ws.data.requestId, sequence_id: 0 }))
      },
      message(ws, message) {
        const s = ws.data
        if (s.closed) return
        if (typeof message !== 'string') {
          const bytes = new Uint8Array(s.carry.length + message.byteLength)
          bytes.set(s.carry)
          bytes.set(new Uint8Array(message.buffer, message.byteOffset, message.byteLength), s.carry.length)
          const windowBytes = ((s.rate * WINDOW_MS) / 1000) * s.width
          const view = new DataView(bytes.buffer)
          let at = 0
          for (; at + windowBytes <= bytes.length; at += windowBytes) {
            const pcm = s.width === 1 ? mulaw.decode(bytes.subarray(at, at + windowBytes)) : Int16Array.from({ length: windowBytes / 2 }, (_, i) => view.getInt16(at + 2 * i, true))
            let sum = 0
            for (const v of pcm) sum += v ** 2
            onWindow(ws, Math.sqrt(sum / pcm.length) > SPEECH_LEVEL)
          }
          s.carry = bytes.slice(at)
          return
        }
        const control = JSON.parse(message) as { type: string }
        fake.controls.push(control.type)
        if (control.type === 'CloseStream') {
          s.closed = true
          ws.close(1000)
        }
      },
      close(ws) {
        ws.data.closed = true
        if (sockets.delete(ws)) fake.open--
      },
    },
  })
  fake.url = `ws://127.0.0.1:${server.port}`
  return fake
}
