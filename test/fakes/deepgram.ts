/**
 * A local Deepgram live-transcription server (https://developers.deepgram.com/docs/live-streaming-audio):
 * `GET /v1/listen?…` upgraded to a WebSocket with `Authorization: Token <key>` (401 otherwise),
 * binary 16-bit PCM in, Deepgram's JSON out, driven by the audio as the live API is:
 * - speech and silence come from the audio's energy (20 ms windows above 0.01 of full scale count
 *   as speech, the floor our energy VAD uses: phone-line silence sits near −60 dBFS, speech at −30
 *   to −10 dBFS). It recognises no words: tests queue the text each stretch of speech says;
 * - while speech runs, interim `Results` (`is_final: false`) reveal that text a word at a time;
 * - a long stretch is finalised in pieces (`is_final: true`, `speech_final: false`);
 * - `endpointing` ms of silence finalise the rest with `speech_final: true`
 *   (https://developers.deepgram.com/docs/endpointing); the stretch's queued text is then used up;
 * - `UtteranceEnd` after `utterance_end_ms` without a word, with `interim_results=true`
 *   (https://developers.deepgram.com/docs/utterance-end);
 * - `{"type":"Finalize"}` finalises what is not final yet, `from_finalize: true`, empty when nothing
 *   is left (https://developers.deepgram.com/docs/finalize: the real service may skip that empty
 *   answer; this fake always sends it);
 * - `KeepAlive` is accepted; `CloseStream` finalises, sends `Metadata` and closes.
 * Time is audio time: results depend on the audio sent, not on how fast it was sent, and leave
 * after the configured latency.
 */
export interface DeepgramFakeOptions {
  /**
   * Wall-clock ms between the audio that ends a piece and its final result (0: at once). Realistic
   * is `REALISTIC.deepgramFinalMs` (test/fakes/realistic-delays.ts).
   */
  finalDelayMs?: number
  /**
   * Speech ms per revealed word, 250 by default: quicker than conversational English (~150 words a
   * minute, 400 ms a word) so tests need little audio.
   */
  wordMs?: number
  /**
   * Speech ms between interim results, 250 by default: Deepgram's docs say interims come "typically
   * every second" (utterance-end page); a word's cadence is the busiest an adapter must take.
   */
  interimMs?: number
  /**
   * Longest stretch of speech finalised as one piece, 3000 ms by default. Deepgram does not publish
   * when it finalises mid-speech; a few seconds is what long speech shows, and 3 s keeps tests short.
   */
  segmentMs?: number
}

export interface DeepgramFake {
  url: string
  /** Query of each stream opened. */
  streams: Record<string, string>[]
  audioBytes: number
  controls: string[]
  /**
   * Text for the next stretches of speech, in order (one stretch: speech up to an endpoint or a
   * Finalize). With `voicedMs` (the stretch's voiced audio, as `voicedMs()` measures it) the words
   * are revealed in step with that audio, none before its share of the speech has been heard, as a
   * recogniser hears them; without it, a word per `wordMs`.
   */
  utterances: (string | { text: string; voicedMs: number })[]
  /** Each stream opened takes the next of these as its own `utterances` (many calls at once, each its own words); `utterances` when none is left. */
  streamUtterances: (string | { text: string; voicedMs: number })[][]
  stop(): void
}

const WINDOW_MS = 20
/** 0.01 of full scale (−40 dBFS): see the header. */
const SPEECH_LEVEL = 0.01 * 32768

/**
 * A Finalize this close to the end of a stretch's voiced audio finds it fully said: the measured
 * `voicedMs` and what arrives after μ-law and resampling differ by a window or two, and 100 ms is
 * shorter than any word.
 */
const FINALIZE_SLACK_MS = 100

/** Voiced ms of `pcm` by the fake's own rule (20 ms windows above SPEECH_LEVEL): an utterance's `voicedMs`. */
export function voicedMs(pcm: Int16Array, rate: number): number {
  const n = (rate * WINDOW_MS) / 1000
  let ms = 0
  for (let at = 0; at + n <= pcm.length; at += n) {
    let sum = 0
    for (let i = at; i < at + n; i++) sum += pcm[i]! ** 2
    if (Math.sqrt(sum / n) > SPEECH_LEVEL) ms += WINDOW_MS
  }
  return ms
}

/** The speech-to-text models the fake's `GET /v1/models` lists. */
export const DEEPGRAM_STT_MODELS = ['nova-3', 'nova-2']

interface Word {
  word: string
  start: number
  end: number
}

interface Stream {
  query: Record<string, string>
  requestId: string
  rate: number
  endpointingMs: number | null
  utteranceEndMs: number | null
  interims: boolean
  /** This stream's own text queue (streamUtterances), or null: the fake's shared one. */
  utterances: DeepgramFake['utterances'] | null
  /** Bytes not yet making a whole window. */
  carry: Uint8Array
  /** Audio ms received. */
  now: number
  silenceMs: number
  lastSpeechEnd: number
  /** Wall-clock time the last speech window arrived (a final result is due `finalDelayMs` after it). */
  lastSpeechAt: number
  /** The current stretch: its queued words, how many are revealed and finalised, its speech ms. */
  stretch: { words: string[]; voicedMs: number | null; timed: Word[]; finalised: number; speechMs: number; nextInterim: number } | null
  /** Where the piece not yet final began (audio ms). */
  pieceStart: number
  /** A word was heard since the last UtteranceEnd, ending at this audio ms. */
  lastWordEnd: number | null
  /** Messages in send order, each leaving at its time. */
  outbox: { at: number; data: string; close?: boolean }[]
  timer: ReturnType<typeof setTimeout> | null
  closed: boolean
}

export function startDeepgramFake(key: string, options: DeepgramFakeOptions = {}): DeepgramFake {
  const finalDelayMs = options.finalDelayMs ?? 0
  const wordMs = options.wordMs ?? 250
  const interimMs = options.interimMs ?? 250
  const segmentMs = options.segmentMs ?? 3000
  const fake: DeepgramFake = { url: '', streams: [], audioBytes: 0, controls: [], utterances: [], streamUtterances: [], stop: () => server.stop(true) }
  type Ws = import('bun').ServerWebSocket<Stream>

  const flush = (ws: Ws) => {
    const s = ws.data
    s.timer = null
    while (s.outbox.length && s.outbox[0]!.at <= Date.now()) {
      const m = s.outbox.shift()!
      if (s.closed) return
      ws.send(m.data)
      if (m.close) {
        s.closed = true
        ws.close(1000)
        return
      }
    }
    if (s.outbox.length) s.timer = setTimeout(() => flush(ws), s.outbox[0]!.at - Date.now())
  }
  // In order, each no earlier than the one before it: a delayed final holds back what follows, as one socket would.
  const emit = (ws: Ws, message: object, delayMs = 0, close = false) => {
    const s = ws.data
    const at = Math.max(Date.now() + delayMs, s.outbox.at(-1)?.at ?? 0)
    s.outbox.push({ at, data: JSON.stringify(message), close })
    if (!s.timer) s.timer = setTimeout(() => flush(ws), Math.max(0, at - Date.now()))
  }

  const results = (s: Stream, words: Word[], start: number, flags: { is_final: boolean; speech_final?: boolean; from_finalize?: boolean }) => ({
    type: 'Results',
    channel_index: [0, 1],
    duration: +((s.now - start) / 1000).toFixed(3),
    start: +(start / 1000).toFixed(3),
    is_final: flags.is_final,
    speech_final: flags.speech_final ?? false,
    from_finalize: flags.from_finalize ?? false,
    channel: {
      alternatives: [
        {
          transcript: words.map((w) => w.word).join(' '),
          confidence: words.length ? 0.98 : 0,
          words: words.map((w) => ({ word: w.word.toLowerCase(), start: w.start / 1000, end: w.end / 1000, confidence: 0.98, punctuated_word: w.word })),
        },
      ],
    },
    metadata: { request_id: s.requestId, model_info: { name: s.query.model ?? 'nova-3', version: '2024-01-01', arch: 'nova-3' }, model_uuid: 'uuid-0' },
  })

  /** Reveals the stretch's words up to `count`, timing them from the last revealed one to `until`. */
  const reveal = (s: Stream, count: number, until: number) => {
    const st = s.stretch!
    const from = st.timed.length
    if (count <= from) return
    const begin = st.timed.at(-1)?.end ?? s.pieceStart
    const step = (until - begin) / (count - from)
    for (let i = from; i < count; i++) st.timed.push({ word: st.words[i]!, start: begin + (i - from) * step, end: begin + (i - from + 1) * step })
    s.lastWordEnd = until
  }

  /** Sends the revealed words not yet final as one final piece. */
  const finalise = (ws: Ws, flags: { speech_final?: boolean; from_finalize?: boolean }) => {
    const s = ws.data
    const st = s.stretch
    const words = st ? st.timed.slice(st.finalised) : []
    if (st) st.finalised = st.timed.length
    // Due `finalDelayMs` after the audio it transcribes arrived, not after the Finalize that asked for it.
    emit(ws, results(s, words, s.pieceStart, { is_final: true, ...flags }), Math.max(0, s.lastSpeechAt + finalDelayMs - Date.now()))
    s.pieceStart = s.now
  }

  /** Ends the current stretch: every queued word is heard, the text is used up. */
  const endStretch = (ws: Ws, flags: { speech_final?: boolean; from_finalize?: boolean }) => {
    const s = ws.data
    const st = s.stretch
    if (st) {
      reveal(s, st.words.length, s.lastSpeechEnd)
      // The last word runs to the end of the speech.
      const last = st.timed.at(-1)
      if (last && st.timed.length > st.finalised && last.end < s.lastSpeechEnd) s.lastWordEnd = last.end = s.lastSpeechEnd
    }
    finalise(ws, flags)
    s.stretch = null
  }

  /** How many of the stretch's words its speech so far has said. */
  const heardWords = (st: NonNullable<Stream['stretch']>) =>
    Math.min(st.words.length, st.voicedMs !== null ? Math.floor((st.words.length * st.speechMs) / Math.max(WINDOW_MS, st.voicedMs)) : Math.floor(st.speechMs / wordMs))

  const onWindow = (ws: Ws, speech: boolean) => {
    const s = ws.data
    s.now += WINDOW_MS
    if (speech) {
      if (!s.stretch) {
        const next = (s.utterances ?? fake.utterances).shift() ?? ''
        const text = typeof next === 'string' ? next : next.text
        s.stretch = { words: text.split(/\s+/).filter(Boolean), voicedMs: typeof next === 'string' ? null : next.voicedMs, timed: [], finalised: 0, speechMs: 0, nextInterim: interimMs }
        s.pieceStart = s.now - WINDOW_MS
      }
      const st = s.stretch
      st.speechMs += WINDOW_MS
      s.silenceMs = 0
      s.lastSpeechEnd = s.now
      s.lastSpeechAt = Date.now()
      reveal(s, heardWords(st), s.now)
      if (s.now - s.pieceStart >= segmentMs && st.timed.length > st.finalised) return finalise(ws, {})
      if (st.speechMs < st.nextInterim) return
      st.nextInterim += interimMs
      if (s.interims && st.timed.length > st.finalised) {
        emit(ws, results(s, st.timed.slice(st.finalised), s.pieceStart, { is_final: false }))
      }
      return
    }
    s.silenceMs += WINDOW_MS
    if (s.stretch && s.endpointingMs !== null && s.silenceMs >= s.endpointingMs) endStretch(ws, { speech_final: true })
    if (s.interims && s.utteranceEndMs !== null && s.lastWordEnd !== null && s.now - s.lastWordEnd >= s.utteranceEndMs) {
      emit(ws, { type: 'UtteranceEnd', channel: [0, 1], last_word_end: s.lastWordEnd / 1000 })
      s.lastWordEnd = null
    }
  }

  const server = Bun.serve<Stream, never>({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      const u = new URL(req.url)
      // The management API BYOK verifies a key with (https://developers.deepgram.com/reference/management-api/projects/list,
      // …/models/list): projects need the key; the model list is public.
      if (req.method === 'GET' && u.pathname === '/v1/projects') {
        if (req.headers.get('authorization') !== `Token ${key}`) return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 })
        return Response.json({ projects: [{ project_id: 'proj-1', name: 'Test project' }] })
      }
      if (req.method === 'GET' && u.pathname === '/v1/models') {
        return Response.json({
          stt: DEEPGRAM_STT_MODELS.map((name, i) => ({
            name,
            canonical_name: name,
            architecture: name.split('-')[0],
            languages: ['en'],
            version: '2024-01-01',
            uuid: `uuid-${i}`,
            batch: true,
            streaming: true,
          })),
          tts: [],
        })
      }
      if (u.pathname !== '/v1/listen') return new Response('not found', { status: 404 })
      if (req.headers.get('authorization') !== `Token ${key}`) return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 })
      const query = Object.fromEntries(u.searchParams)
      // Only what our adapter sends is decoded; anything else would be read as noise.
      if ((query.encoding ?? 'linear16') !== 'linear16' || (query.channels ?? '1') !== '1') {
        return Response.json({ err_code: 'Bad Request', err_msg: 'The fake decodes linear16 mono only.' }, { status: 400 })
      }
      fake.streams.push(query)
      const ms = (v: string | undefined, fallback: number | null) => (v === undefined ? fallback : v === 'false' ? null : Number(v))
      const data: Stream = {
        query,
        utterances: fake.streamUtterances.shift() ?? null,
        requestId: crypto.randomUUID(),
        rate: Number(query.sample_rate ?? 16_000),
        // Deepgram's default endpointing is 10 ms (endpointing docs); utterance end is off unless asked.
        endpointingMs: ms(query.endpointing, 10),
        utteranceEndMs: ms(query.utterance_end_ms, null),
        interims: query.interim_results === 'true',
        carry: new Uint8Array(0),
        now: 0,
        silenceMs: 0,
        lastSpeechEnd: 0,
        lastSpeechAt: 0,
        stretch: null,
        pieceStart: 0,
        lastWordEnd: null,
        outbox: [],
        timer: null,
        closed: false,
      }
      return srv.upgrade(req, { data }) ? undefined : new Response('upgrade failed', { status: 400 })
    },
    websocket: {
      message(ws, message) {
        const s = ws.data
        if (s.closed) return
        if (typeof message !== 'string') {
          fake.audioBytes += message.byteLength
          const bytes = new Uint8Array(s.carry.length + message.byteLength)
          bytes.set(s.carry)
          bytes.set(new Uint8Array(message.buffer, message.byteOffset, message.byteLength), s.carry.length)
          const windowBytes = ((s.rate * WINDOW_MS) / 1000) * 2
          const view = new DataView(bytes.buffer)
          let at = 0
          for (; at + windowBytes <= bytes.length; at += windowBytes) {
            let sum = 0
            for (let i = at; i < at + windowBytes; i += 2) sum += view.getInt16(i, true) ** 2
            onWindow(ws, Math.sqrt(sum / (windowBytes / 2)) > SPEECH_LEVEL)
          }
          s.carry = bytes.slice(at)
          return
        }
        const control = JSON.parse(message) as { type: string }
        fake.controls.push(control.type)
        // Finalize finalises the words heard so far; a stretch with words still to come goes on with
        // the speech that follows (a Finalize sent at a pause inside a sentence), one fully heard ends.
        if (control.type === 'Finalize') {
          const st = s.stretch
          if (st && st.timed.length < st.words.length && !(st.voicedMs !== null && st.speechMs >= st.voicedMs - FINALIZE_SLACK_MS)) finalise(ws, { from_finalize: true })
          else endStretch(ws, { from_finalize: true })
        }
        if (control.type === 'CloseStream') {
          if (s.stretch) endStretch(ws, {})
          emit(
            ws,
            { type: 'Metadata', transaction_key: 'deprecated', request_id: s.requestId, sha256: '0'.repeat(64), created: new Date().toISOString(), duration: s.now / 1000, channels: 1 },
            0,
            true,
          )
        }
      },
      close(ws) {
        ws.data.closed = true
        if (ws.data.timer) clearTimeout(ws.data.timer)
      },
    },
  })
  fake.url = `ws://127.0.0.1:${server.port}`
  return fake
}
