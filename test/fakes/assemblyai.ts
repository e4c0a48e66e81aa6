/**
 * A local AssemblyAI Universal-Streaming server, its v3 protocol
 * (https://www.assemblyai.com/docs/streaming/message-sequence,
 * https://www.assemblyai.com/docs/streaming/common-session-errors-and-closures, the token endpoint
 * https://www.assemblyai.com/docs/streaming/api-spec/generate-streaming-token; message fields as
 * https://github.com/AssemblyAI/assemblyai-node-sdk/blob/main/src/types/streaming/index.ts has them):
 * - `GET /v3/ws?…` upgraded to a WebSocket; the key in `Authorization` (no scheme) or a temporary
 *   `token` from `GET /v3/token`. As the real service, credentials and parameters are checked after
 *   the upgrade: an `Error` frame (`error_code`, `error`) and a close with that code: 1008 for a
 *   refused key, 3009 past `maxSessions` concurrent sessions, 3006 without `speech_model`, 3007 for
 *   an audio chunk outside 50–1,000 ms, 3005 (`Session Cancelled`) when `failAfterMs` of audio ran;
 * - `Begin` on open; binary 16-bit PCM in; speech and silence by the audio's energy, as
 *   test/fakes/deepgram.ts (20 ms windows above 0.01 of full scale). It recognises no words: tests
 *   queue the text each stretch of speech says, revealed a word at a time in `Turn` messages
 *   (`end_of_turn: false`, `transcript` the final words, `words` with the last one not final);
 * - the turn ends after `min_turn_silence` ms of silence when its end-of-turn confidence (the
 *   queued `confidence`, 0.9 unless given) reaches `end_of_turn_confidence_threshold`, else after
 *   `max_turn_silence`: a `Turn` with `end_of_turn: true`, then with `format_turns=true` the same
 *   turn again formatted (`turn_is_formatted: true`, the queued text as written). Every pause of
 *   UTTERANCE_PAUSE_MS, sure or unsure, is told first with `utterance`, the words so far, the turn
 *   open ("populated when the system detects a pause in speech", for eager LLM inference:
 *   https://www.assemblyai.com/docs/speech-to-text/universal-streaming/message-sequence), unless
 *   the turn ends at that pause, whose end then carries it;
 * - `ForceEndpoint` ends the open turn at once (nothing when none is open); `Terminate` ends it,
 *   sends `Termination` and closes 1000.
 * Time is audio time; results leave `finalDelayMs` after the audio that ends them arrived.
 */
const WINDOW_MS = 20
const SPEECH_LEVEL = 0.01 * 32768
/** A ForceEndpoint this close to the end of a stretch's voiced audio finds it fully said (as the Deepgram fake's Finalize). */
const FINALIZE_SLACK_MS = 100
/**
 * The Universal-Streaming docs' defaults: end-of-turn confidence 0.4, 400 ms of silence when
 * confident (`min_end_of_turn_silence_when_confident`, now `min_turn_silence`), 1,280 ms at most.
 */
export const ASSEMBLYAI_DEFAULTS = { threshold: 0.4, minSilenceMs: 400, maxSilenceMs: 1_280 }
/**
 * The silence AssemblyAI calls a pause for `utterance`: it publishes no figure; 160 ms is the
 * shortest silence its turn-detection docs end a turn on (the "aggressive" configuration's
 * `min_end_of_turn_silence_when_confident`). The message still waits for the words to be final
 * (`finalDelayMs` after the audio).
 */
export const UTTERANCE_PAUSE_MS = 160

export interface AssemblyAiUtterance {
  text: string
  /** The stretch's voiced ms (`voicedMs()` of test/fakes/deepgram.ts): words revealed in step with it. */
  voicedMs?: number
  /** The model's end-of-turn confidence at its end (0.9 when absent: a plainly finished turn). */
  confidence?: number
}

export interface AssemblyAiFakeOptions {
  /** Wall-clock ms between the audio that ends a turn and its end (0: at once); REALISTIC.assemblyaiEndMs is the hosted figure. */
  finalDelayMs?: number
  /** More ms before the formatted repeat of an ended turn. */
  formatDelayMs?: number
  /** Speech ms per revealed word when an utterance gives no voicedMs: 250. */
  wordMs?: number
  /** Concurrent sessions the key may hold; the next is closed 3009. */
  maxSessions?: number
  /** Audio ms after which a session fails with 3005 (the vendor failing mid-stream). */
  failAfterMs?: number
  /** Every REST answer has this status (429: rate limited, 5xx: down). */
  restStatus?: number
}

export interface AssemblyAiFake {
  url: string
  /** Query of each stream opened. */
  streams: Record<string, string>[]
  /** The JSON messages each client sent (`ForceEndpoint`, `Terminate`), by type. */
  controls: string[]
  /** Audio bytes received, every session. */
  audioBytes: number
  /** Close codes the fake closed sessions with. */
  closes: number[]
  utterances: (string | AssemblyAiUtterance)[]
  /** Each stream opened takes the next of these as its own utterances. */
  streamUtterances: (string | AssemblyAiUtterance)[][]
  stop(): void
}

/** One queued utterance as it is spoken; a forced end splits it into turns, its words paced as one. */
interface Stretch {
  words: string[]
  formatted: string
  voicedMs: number | null
  confidence: number
  /** Words heard so far, and where the open turn's first word is. */
  revealed: number
  turnStart: number
  speechMs: number
  /** A pause was told (`utterance`) since the last new word. */
  uttered: boolean
}

interface Session {
  query: Record<string, string>
  refused: { code: number; error: string } | null
  utterances: (string | AssemblyAiUtterance)[] | null
  turnOrder: number
  stretch: Stretch | null
  carry: Uint8Array
  now: number
  silenceMs: number
  lastSpeechAt: number
  outbox: { at: number; data: string; close?: number }[]
  timer: ReturnType<typeof setTimeout> | null
  closed: boolean
  /** An Error frame is out: the close follows, nothing more is heard. */
  failed: boolean
  startedAt: number
}

const plain = (w: string) => w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '')

export function startAssemblyAiFake(key: string, options: AssemblyAiFakeOptions = {}): AssemblyAiFake {
  const finalDelayMs = options.finalDelayMs ?? 0
  const formatDelayMs = options.formatDelayMs ?? 0
  const wordMs = options.wordMs ?? 250
  const tokens = new Set<string>()
  let live = 0
  const fake: AssemblyAiFake = { url: '', streams: [], audioBytes: 0, controls: [], closes: [], utterances: [], streamUtterances: [], stop: () => server.stop(true) }
  type Ws = import('bun').ServerWebSocket<Session>

  const flush = (ws: Ws) => {
    const s = ws.data
    s.timer = null
    while (s.outbox.length && s.outbox[0]!.at <= Date.now()) {
      const m = s.outbox.shift()!
      if (s.closed) return
      ws.send(m.data)
      if (m.close !== undefined) {
        s.closed = true
        fake.closes.push(m.close)
        ws.close(m.close, m.close === 1000 ? '' : 'See Error message for details')
        return
      }
    }
    if (s.outbox.length) s.timer = setTimeout(() => flush(ws), s.outbox[0]!.at - Date.now())
  }
  const emit = (ws: Ws, message: object, delayMs = 0, close?: number) => {
    const s = ws.data
    const at = Math.max(Date.now() + delayMs, s.outbox.at(-1)?.at ?? 0)
    s.outbox.push({ at, data: JSON.stringify(message), close })
    if (!s.timer) s.timer = setTimeout(() => flush(ws), Math.max(0, at - Date.now()))
  }
  const error = (ws: Ws, code: number, text: string) => {
    if (ws.data.failed) return
    ws.data.failed = true
    emit(ws, { type: 'Error', error_code: code, error: text }, 0, code)
  }

  const words = (st: Stretch, final: boolean) =>
    st.words
      .slice(st.turnStart, st.revealed)
      .map((w, i) => ({ start: i * wordMs, end: (i + 1) * wordMs, text: plain(w), confidence: 0.95, word_is_final: final || i < st.revealed - st.turnStart - 1 }))
  /** The turn's words as the queued text writes them (the whole text when the turn is all of it). */
  const written = (st: Stretch) => (st.turnStart === 0 && st.revealed === st.words.length ? st.formatted : st.words.slice(st.turnStart, st.revealed).join(' '))
  /** `pause`: the message of a pause, its `utterance` the words so far, all of them final. */
  const turn = (s: Session, st: Stretch, end: boolean, formatted: boolean, pause = false) => ({
    type: 'Turn',
    turn_order: s.turnOrder,
    turn_is_formatted: formatted,
    end_of_turn: end,
    transcript: formatted
      ? written(st)
      : words(st, end || pause)
          .filter((w) => w.word_is_final)
          .map((w) => w.text)
          .join(' '),
    end_of_turn_confidence: end || pause ? st.confidence : 0.05,
    words: words(st, end || pause),
    utterance:
      pause && !formatted
        ? words(st, true)
            .map((w) => w.text)
            .join(' ')
        : '',
  })

  /** Ends the open turn with the words heard so far; words still to come are the next turn's, heard as the speech goes on. */
  const endTurn = (ws: Ws, pause = false) => {
    const s = ws.data
    const st = s.stretch
    if (!st || st.revealed === st.turnStart) return
    const delay = Math.max(0, s.lastSpeechAt + finalDelayMs - Date.now())
    emit(ws, turn(s, st, true, false, pause), delay)
    if (s.query.format_turns === 'true') emit(ws, turn(s, st, true, true), delay + formatDelayMs)
    s.turnOrder++
    st.turnStart = st.revealed
    if (st.revealed === st.words.length) s.stretch = null
  }

  const heard = (st: Stretch) => Math.min(st.words.length, st.voicedMs !== null ? Math.floor((st.words.length * st.speechMs) / Math.max(WINDOW_MS, st.voicedMs)) : Math.floor(st.speechMs / wordMs))

  const onWindow = (ws: Ws, speech: boolean) => {
    const s = ws.data
    s.now += WINDOW_MS
    if (options.failAfterMs !== undefined && s.now >= options.failAfterMs) return error(ws, 3005, 'Session Cancelled: An error occurred')
    if (speech) {
      if (!s.stretch) {
        const next = (s.utterances ?? fake.utterances).shift() ?? ''
        const u = typeof next === 'string' ? { text: next } : next
        s.stretch = {
          words: u.text.split(/\s+/).filter(Boolean),
          formatted: u.text,
          voicedMs: u.voicedMs ?? null,
          confidence: u.confidence ?? 0.9,
          revealed: 0,
          turnStart: 0,
          speechMs: 0,
          uttered: false,
        }
      }
      const st = s.stretch
      st.speechMs += WINDOW_MS
      s.silenceMs = 0
      s.lastSpeechAt = Date.now()
      const before = st.revealed
      st.revealed = Math.max(st.revealed, heard(st))
      if (st.revealed > before) {
        st.uttered = false
        emit(ws, turn(s, st, false, false))
      }
      return
    }
    s.silenceMs += WINDOW_MS
    const st = s.stretch
    if (!st || st.revealed === st.turnStart) return
    const threshold = Number(s.query.end_of_turn_confidence_threshold ?? ASSEMBLYAI_DEFAULTS.threshold)
    const min = Number(s.query.min_turn_silence ?? s.query.min_end_of_turn_silence_when_confident ?? ASSEMBLYAI_DEFAULTS.minSilenceMs)
    const max = Number(s.query.max_turn_silence ?? ASSEMBLYAI_DEFAULTS.maxSilenceMs)
    const confident = st.confidence >= threshold
    if (s.silenceMs >= (confident ? min : max)) {
      st.revealed = st.words.length
      endTurn(ws, true)
    } else if (!st.uttered && s.silenceMs >= UTTERANCE_PAUSE_MS) {
      // A pause the turn does not end at (yet): told as an utterance, the turn open, once its words
      // are final: a stretch said to its end (as a ForceEndpoint finds it) has all of them.
      if (st.voicedMs !== null && st.speechMs >= st.voicedMs - FINALIZE_SLACK_MS) st.revealed = st.words.length
      st.uttered = true
      emit(ws, turn(s, st, false, false, true), Math.max(0, s.lastSpeechAt + finalDelayMs - Date.now()))
    }
  }

  const server = Bun.serve<Session, never>({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      const u = new URL(req.url)
      if (req.method === 'GET' && u.pathname === '/v3/token') {
        if (options.restStatus) return Response.json({ error: 'Too Many Requests' }, { status: options.restStatus })
        if (req.headers.get('authorization') !== key) return Response.json({ error: 'Invalid API key' }, { status: 401 })
        const expires = Number(u.searchParams.get('expires_in_seconds'))
        if (!Number.isInteger(expires) || expires < 1 || expires > 600) return Response.json({ error: 'expires_in_seconds must be between 1 and 600' }, { status: 400 })
        const token = crypto.randomUUID()
        tokens.add(token)
        return Response.json({ token, expires_in_seconds: expires })
      }
      if (u.pathname !== '/v3/ws') return new Response('not found', { status: 404 })
      const query = Object.fromEntries(u.searchParams)
      const token = query.token
      const authorised = req.headers.get('authorization') === key || (token !== undefined && tokens.delete(token))
      const refused = !authorised
        ? { code: 1008, error: `Unauthorized Connection: ${req.headers.get('authorization') || token ? 'Invalid API key' : 'Missing Authorization header'}` }
        : options.maxSessions !== undefined && live >= options.maxSessions
          ? { code: 3009, error: 'Unauthorized Connection: Too many concurrent sessions' }
          : !query.speech_model
            ? { code: 3006, error: 'Invalid Message: speech_model is required' }
            : (query.encoding ?? 'pcm_s16le') !== 'pcm_s16le'
              ? { code: 3006, error: 'Invalid Message: the fake decodes pcm_s16le only' }
              : null
      if (!refused) fake.streams.push(query)
      const data: Session = {
        query,
        refused,
        utterances: refused ? null : (fake.streamUtterances.shift() ?? null),
        turnOrder: 0,
        stretch: null,
        carry: new Uint8Array(0),
        now: 0,
        silenceMs: 0,
        lastSpeechAt: 0,
        outbox: [],
        timer: null,
        closed: false,
        failed: false,
        startedAt: Date.now(),
      }
      return srv.upgrade(req, { data }) ? undefined : new Response('upgrade failed', { status: 400 })
    },
    websocket: {
      open(ws) {
        const s = ws.data
        if (s.refused) return error(ws, s.refused.code, s.refused.error)
        live++
        emit(ws, { type: 'Begin', id: crypto.randomUUID(), expires_at: Math.floor(Date.now() / 1000) + 10_800 })
      },
      message(ws, message) {
        const s = ws.data
        if (s.closed || s.failed) return
        if (typeof message !== 'string') {
          const rate = Number(s.query.sample_rate ?? 16_000)
          const ms = (message.byteLength / 2 / rate) * 1000
          if (ms < 50 || ms > 1000) return error(ws, 3007, `Input duration violation: ${Math.round(ms)} ms. Expected between 50 and 1000 ms`)
          fake.audioBytes += message.byteLength
          const bytes = new Uint8Array(s.carry.length + message.byteLength)
          bytes.set(s.carry)
          bytes.set(new Uint8Array(message.buffer, message.byteOffset, message.byteLength), s.carry.length)
          const windowBytes = ((rate * WINDOW_MS) / 1000) * 2
          const view = new DataView(bytes.buffer)
          let at = 0
          for (; at + windowBytes <= bytes.length && !s.failed; at += windowBytes) {
            let sum = 0
            for (let i = at; i < at + windowBytes; i += 2) sum += view.getInt16(i, true) ** 2
            onWindow(ws, Math.sqrt(sum / (windowBytes / 2)) > SPEECH_LEVEL)
          }
          s.carry = bytes.slice(at)
          return
        }
        let control: { type?: string }
        try {
          control = JSON.parse(message)
        } catch {
          return error(ws, 3006, `Invalid JSON: ${message.slice(0, 50)}`)
        }
        fake.controls.push(control.type ?? '')
        if (control.type === 'ForceEndpoint') {
          const st = s.stretch
          if (st && st.voicedMs !== null && st.speechMs >= st.voicedMs - FINALIZE_SLACK_MS) st.revealed = st.words.length
          endTurn(ws)
        } else if (control.type === 'Terminate') {
          endTurn(ws)
          emit(ws, { type: 'Termination', audio_duration_seconds: Math.round(s.now / 1000), session_duration_seconds: Math.round((Date.now() - s.startedAt) / 1000) }, 0, 1000)
        } else if (control.type !== 'KeepAlive' && control.type !== 'UpdateConfiguration') error(ws, 3006, `Invalid Message Type: ${control.type}`)
      },
      close(ws) {
        const s = ws.data
        if (!s.refused) live--
        s.closed = true
        if (s.timer) clearTimeout(s.timer)
      },
    },
  })
  fake.url = `ws://127.0.0.1:${server.port}`
  return fake
}
