/**
 * A local OpenAI Realtime API (GA interface) speaking its wire protocol on 127.0.0.1:
 * https://platform.openai.com/docs/guides/realtime-websocket, the events in
 * https://platform.openai.com/docs/api-reference/realtime-client-events and
 * https://platform.openai.com/docs/api-reference/realtime-server-events (names checked against
 * https://github.com/openai/openai-node/blob/master/src/resources/realtime/realtime.ts), and the VAD modes in
 * https://platform.openai.com/docs/guides/realtime-vad. Also `GET /v1/models` (BYOK's key check).
 *
 * - `GET /v1/realtime?model=…` upgraded to a WebSocket; `Authorization: Bearer <key>`. A wrong
 *   key gets an `error` event (`invalid_request_error`, `invalid_api_key`) and a close, as the
 *   API does; an unknown model `model_not_found`.
 * - `session.created` first; `session.update` answers `session.updated` with what it set.
 * - `input_audio_buffer.append` takes base64 G.711 μ-law. Server VAD on its energy: a 20 ms window
 *   above 0.01 of full scale is speech (the floor test/fakes/deepgram.ts uses);
 *   `speech_started` (with `audio_start_ms`) on the first, `speech_stopped` after the session's
 *   `silence_duration_ms` (500 by default, the docs' default) of silence, then `committed`,
 *   `conversation.item.created`, the transcription (`…input_audio_transcription.completed`, the
 *   text the test queued for that stretch) and, with `create_response`, a response. Semantic VAD
 *   ends the turn after its `eagerness`' wait (the docs give no numbers: 500 ms here as server VAD).
 *   Speech while a response runs cancels it (`interrupt_response`). With `turn_detection: null`
 *   none of this runs: the client's `input_audio_buffer.commit` makes the caller's message (and its
 *   transcription) and its `response.create` the answer.
 * - A response plays the next scripted reply: spoken text becomes μ-law (a 440 Hz tone, a word per
 *   `wordMs`) in `response.output_audio.delta` pieces of 100 ms, the transcript word by word in
 *   `response.output_audio_transcript.delta`, then the `.done` events and `response.done` with
 *   `usage`; a tool reply is a `function_call` item with `response.function_call_arguments.done`.
 *   `rate_limits.updated` follows each `response.created`.
 * - `response.cancel` stops the response (`response.done`, status `cancelled`), or answers the
 *   `response_cancel_not_active` error when none runs. `conversation.item.truncate` answers
 *   `conversation.item.truncated`, or an error when `audio_end_ms` is past the audio sent.
 * - Failure scripts: `rateLimited` (a response ends `failed` with `rate_limit_exceeded`, as
 *   `response.done.status_details.error` carries it) and `dropAfterDeltas` (the socket closes 1011
 *   mid-response).
 * Audio tokens are counted at 10 a second in and 20 a second out (OpenAI's published rates are
 * per token; these are round figures of the order its usage reports).
 */
import type { ServerWebSocket } from 'bun'
import { decodeMulaw, encodeMulaw } from '../../src/voice/codecs'

export type RealtimeReply = { text: string } | { tool: { name: string; arguments: object } }

export interface RealtimeFakeOptions {
  apiKey: string
  models?: string[]
  /** Ms from `response.create` (or the turn's end) to the first audio delta: the latency floor (realistic-delays.ts). */
  firstAudioMs?: number
  /** How much faster than real time the audio is made (the API streams ahead of playback). */
  speedup?: number
  /** Speech ms per word of a reply's audio. */
  wordMs?: number
}

export interface RealtimeSessionLog {
  model: string
  /** Every client event, in order (audio payloads left out). */
  events: any[]
  session: any
  audioMs: number
}

export interface RealtimeFake {
  /** The key the fake accepts; changing it revokes the old one (a key that was good when saved). */
  apiKey: string
  /** Every HTTP request and WebSocket upgrade, as `METHOD /path`. */
  requests: string[]
  origin: string
  baseUrl: string
  sessions: RealtimeSessionLog[]
  /** Replies for the next responses, in order; with none left a response says "Okay." */
  replies: RealtimeReply[]
  /** What the next stretches of the caller's speech say (the transcription), in order. */
  heard: string[]
  /** Every response from now on fails with `rate_limit_exceeded`. */
  rateLimited: boolean
  /** Close the socket (1011) after this many audio deltas of the next response. */
  dropAfterDeltas: number | null
  stop(): Promise<void>
}

const MULAW_RATE = 8_000
const WINDOW = 160 // 20 ms at 8 kHz
const SPEECH_RMS = 0.01 * 32768
const CHUNK_MS = 100

interface Conn {
  log: RealtimeSessionLog
  ok: boolean
  audio: { ms: number; speaking: boolean; startMs: number; silentMs: number; pending: Int16Array }
  response: { id: string; itemId: string; cancelled: boolean; sentMs: number; deltas: number } | null
  items: Map<string, number>
  n: number
}

/** A tone for `ms` of speech, as μ-law. */
function speech(ms: number): Uint8Array {
  const pcm = new Int16Array(Math.round((ms * MULAW_RATE) / 1000))
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / MULAW_RATE))
  return encodeMulaw(pcm)
}

export function startRealtimeFake(opts: RealtimeFakeOptions): RealtimeFake {
  const wordMs = opts.wordMs ?? 300
  const speedup = opts.speedup ?? 10
  const fake: RealtimeFake = {
    apiKey: opts.apiKey,
    requests: [],
    origin: '',
    baseUrl: '',
    sessions: [],
    replies: [],
    heard: [],
    rateLimited: false,
    dropAfterDeltas: null,
    stop: async () => void server.stop(true),
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
  const send = (ws: ServerWebSocket<Conn>, event: object) => {
    ws.data.n++
    ws.send(JSON.stringify({ event_id: `event_${ws.data.n}`, ...event }))
  }
  const error = (ws: ServerWebSocket<Conn>, type: string, code: string, message: string, eventId?: string) =>
    send(ws, { type: 'error', error: { type, code, message, param: null, event_id: eventId ?? null } })
  const turnDetection = (c: Conn) => c.log.session?.audio?.input?.turn_detection

  async function respond(ws: ServerWebSocket<Conn>, instructions?: string) {
    const c = ws.data
    const id = `resp_${crypto.randomUUID().slice(0, 8)}`
    const itemId = `item_${crypto.randomUUID().slice(0, 8)}`
    c.response = { id, itemId, cancelled: false, sentMs: 0, deltas: 0 }
    const r = c.response
    // An instruction to say a line (the opening, a goodbye) is said; otherwise the next scripted reply, taken now.
    const quoted = instructions ? /Say exactly this, and nothing else: (".*")$/.exec(instructions) : null
    const reply: RealtimeReply = quoted ? { text: JSON.parse(quoted[1]!) } : (fake.replies.shift() ?? { text: 'Okay.' })
    send(ws, { type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [] } })
    send(ws, { type: 'rate_limits.updated', rate_limits: [{ name: 'requests', limit: 1000, remaining: fake.rateLimited ? 0 : 999, reset_seconds: 60 }] })
    if (fake.rateLimited) {
      c.response = null
      const err = { type: 'invalid_request_error', code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-realtime on requests per min (RPM): Limit 1000, Used 1000.' }
      return send(ws, { type: 'response.done', response: { id, object: 'realtime.response', status: 'failed', status_details: { type: 'failed', error: err }, output: [], usage: null } })
    }
    await sleep(opts.firstAudioMs ?? 0)
    if (r.cancelled || ws.readyState !== 1) return
    const usage = (outMs: number, outText: number) => ({
      total_tokens: 0,
      input_tokens: Math.round(c.audio.ms / 100) + 50,
      output_tokens: Math.round(outMs / 50) + outText,
      input_token_details: { text_tokens: 50, audio_tokens: Math.round(c.audio.ms / 100), cached_tokens: 0 },
      output_token_details: { text_tokens: outText, audio_tokens: Math.round(outMs / 50) },
    })
    if ('tool' in reply) {
      const callId = `call_${crypto.randomUUID().slice(0, 8)}`
      const item = { id: itemId, type: 'function_call', status: 'completed', name: reply.tool.name, call_id: callId, arguments: JSON.stringify(reply.tool.arguments) }
      send(ws, { type: 'response.output_item.added', response_id: id, output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } })
      send(ws, { type: 'response.function_call_arguments.done', response_id: id, item_id: itemId, output_index: 0, call_id: callId, name: reply.tool.name, arguments: item.arguments })
      send(ws, { type: 'response.output_item.done', response_id: id, output_index: 0, item })
      c.response = null
      return send(ws, { type: 'response.done', response: { id, object: 'realtime.response', status: 'completed', output: [item], usage: usage(0, 10) } })
    }
    const words = reply.text.split(/\s+/).filter(Boolean)
    send(ws, { type: 'response.output_item.added', response_id: id, output_index: 0, item: { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } })
    const audio = speech(words.length * wordMs)
    c.items.set(itemId, 0)
    const bytes = (CHUNK_MS * MULAW_RATE) / 1000
    let said = 0
    for (let at = 0; at < audio.length; at += bytes) {
      if (r.cancelled || ws.readyState !== 1) return
      if (fake.dropAfterDeltas !== null && r.deltas >= fake.dropAfterDeltas) {
        fake.dropAfterDeltas = null
        return ws.close(1011, 'The server had an error while processing your request.')
      }
      const piece = audio.subarray(at, at + bytes)
      send(ws, { type: 'response.output_audio.delta', response_id: id, item_id: itemId, output_index: 0, content_index: 0, delta: Buffer.from(piece).toString('base64') })
      r.deltas++
      r.sentMs += (piece.length * 1000) / MULAW_RATE
      c.items.set(itemId, r.sentMs)
      const due = Math.min(words.length, Math.ceil(r.sentMs / wordMs))
      for (; said < due; said++)
        send(ws, { type: 'response.output_audio_transcript.delta', response_id: id, item_id: itemId, output_index: 0, content_index: 0, delta: (said ? ' ' : '') + words[said] })
      await sleep(CHUNK_MS / speedup)
    }
    if (r.cancelled) return
    send(ws, { type: 'response.output_audio.done', response_id: id, item_id: itemId, output_index: 0, content_index: 0 })
    send(ws, { type: 'response.output_audio_transcript.done', response_id: id, item_id: itemId, output_index: 0, content_index: 0, transcript: reply.text })
    c.response = null
    send(ws, {
      type: 'response.done',
      response: { id, object: 'realtime.response', status: 'completed', output: [{ id: itemId, type: 'message', role: 'assistant' }], usage: usage(r.sentMs, words.length) },
    })
  }

  function cancel(ws: ServerWebSocket<Conn>, status = 'cancelled') {
    const r = ws.data.response
    if (!r) return false
    r.cancelled = true
    ws.data.response = null
    send(ws, {
      type: 'response.done',
      response: {
        id: r.id,
        object: 'realtime.response',
        status,
        status_details: { type: 'cancelled', reason: 'turn_detected' },
        output: [],
        usage: { input_tokens: 0, output_tokens: Math.round(r.sentMs / 50), output_token_details: { audio_tokens: Math.round(r.sentMs / 50) } },
      },
    })
    return true
  }

  /** The caller's μ-law: energy VAD per 20 ms window, audio time only. */
  function hear(ws: ServerWebSocket<Conn>, mulaw: Uint8Array) {
    const c = ws.data
    const a = c.audio
    const joined = new Int16Array(a.pending.length + mulaw.length)
    joined.set(a.pending)
    joined.set(decodeMulaw(mulaw), a.pending.length)
    let at = 0
    const turn = turnDetection(c)
    const silenceMs = turn?.silence_duration_ms ?? 500
    for (; at + WINDOW <= joined.length; at += WINDOW) {
      let sum = 0
      for (let i = at; i < at + WINDOW; i++) sum += joined[i]! * joined[i]!
      const loud = Math.sqrt(sum / WINDOW) > SPEECH_RMS
      a.ms += 20
      if (!turn) continue
      if (loud && !a.speaking) {
        a.speaking = true
        a.startMs = a.ms - 20
        send(ws, { type: 'input_audio_buffer.speech_started', audio_start_ms: a.startMs, item_id: `item_in_${a.startMs}` })
        if (turn.interrupt_response !== false) cancel(ws)
      }
      if (!a.speaking) continue
      a.silentMs = loud ? 0 : a.silentMs + 20
      if (a.silentMs < silenceMs) continue
      a.speaking = false
      a.silentMs = 0
      const item = `item_in_${a.startMs}`
      send(ws, { type: 'input_audio_buffer.speech_stopped', audio_end_ms: a.ms - silenceMs, item_id: item })
      send(ws, { type: 'input_audio_buffer.committed', previous_item_id: null, item_id: item })
      send(ws, { type: 'conversation.item.created', previous_item_id: null, item: { id: item, type: 'message', role: 'user', content: [{ type: 'input_audio', transcript: null }] } })
      const text = fake.heard.shift() ?? ''
      send(ws, { type: 'conversation.item.input_audio_transcription.completed', item_id: item, content_index: 0, transcript: text, usage: { type: 'duration', seconds: 1 } })
      if (turn.create_response !== false) void respond(ws)
    }
    a.pending = joined.slice(at)
  }

  function clientEvent(ws: ServerWebSocket<Conn>, e: any) {
    const c = ws.data
    c.log.events.push(e.type === 'input_audio_buffer.append' ? { type: e.type } : e)
    switch (e.type) {
      case 'session.update':
        c.log.session = { ...c.log.session, ...e.session }
        return send(ws, { type: 'session.updated', session: { id: 'sess_fake', object: 'realtime.session', ...c.log.session } })
      case 'input_audio_buffer.append': {
        const bytes = Buffer.from(String(e.audio ?? ''), 'base64')
        return hear(ws, bytes)
      }
      case 'input_audio_buffer.commit': {
        // The client's turn detection: the buffer becomes the caller's message, transcribed.
        const item = `item_in_${c.audio.ms}`
        send(ws, { type: 'input_audio_buffer.committed', previous_item_id: null, item_id: item })
        send(ws, { type: 'conversation.item.created', previous_item_id: null, item: { id: item, type: 'message', role: 'user', content: [{ type: 'input_audio', transcript: null }] } })
        return send(ws, {
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: item,
          content_index: 0,
          transcript: fake.heard.shift() ?? '',
          usage: { type: 'duration', seconds: 1 },
        })
      }
      case 'input_audio_buffer.clear':
        c.audio.pending = new Int16Array(0)
        return send(ws, { type: 'input_audio_buffer.cleared' })
      case 'conversation.item.create':
        return send(ws, { type: 'conversation.item.created', item: { id: `item_${crypto.randomUUID().slice(0, 8)}`, ...e.item } })
      case 'response.create':
        if (c.response) return error(ws, 'invalid_request_error', 'conversation_already_has_active_response', 'Conversation already has an active response in progress.', e.event_id)
        return void respond(ws, e.response?.instructions)
      case 'response.cancel':
        if (!cancel(ws)) error(ws, 'invalid_request_error', 'response_cancel_not_active', 'Cancellation failed: no active response found', e.event_id)
        return
      case 'conversation.item.truncate': {
        const sent = c.items.get(e.item_id)
        if (sent === undefined) return error(ws, 'invalid_request_error', 'item_not_found', `Item with item_id not found: ${e.item_id}`, e.event_id)
        if (e.audio_end_ms > sent) return error(ws, 'invalid_request_error', 'invalid_value', `audio_end_ms ${e.audio_end_ms} is past the item's ${Math.round(sent)} ms of audio`, e.event_id)
        return send(ws, { type: 'conversation.item.truncated', item_id: e.item_id, content_index: e.content_index ?? 0, audio_end_ms: e.audio_end_ms })
      }
      default:
        return error(ws, 'invalid_request_error', 'unknown_event', `Invalid value: '${String(e.type).slice(0, 60)}'.`, e.event_id)
    }
  }

  const server = Bun.serve<Conn>({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      const url = new URL(req.url)
      const ok = req.headers.get('authorization') === `Bearer ${fake.apiKey}`
      fake.requests.push(`${req.method} ${url.pathname}`)
      if (url.pathname === '/v1/realtime') {
        const model = url.searchParams.get('model') ?? ''
        const data: Conn = {
          log: { model, events: [], session: null, audioMs: 0 },
          ok,
          audio: { ms: 0, speaking: false, startMs: 0, silentMs: 0, pending: new Int16Array(0) },
          response: null,
          items: new Map(),
          n: 0,
        }
        return srv.upgrade(req, { data }) ? undefined : new Response('expected a WebSocket', { status: 400 })
      }
      if (!ok) return Response.json({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }, { status: 401 })
      if (req.method === 'GET' && url.pathname === '/v1/models') {
        return Response.json({ object: 'list', data: (opts.models ?? ['gpt-realtime']).map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) })
      }
      return Response.json({ error: { message: `Unknown request URL: ${req.method} ${url.pathname}.`, type: 'invalid_request_error', param: null, code: 'unknown_url' } }, { status: 404 })
    },
    websocket: {
      open(ws) {
        if (!ws.data.ok) {
          error(ws, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.')
          return ws.close(3000, 'invalid_api_key')
        }
        if (!(opts.models ?? ['gpt-realtime']).includes(ws.data.log.model)) {
          error(ws, 'invalid_request_error', 'model_not_found', `The model '${ws.data.log.model}' does not exist or you do not have access to it.`)
          return ws.close(3000, 'model_not_found')
        }
        fake.sessions.push(ws.data.log)
        ws.data.log.session = {
          type: 'realtime',
          model: ws.data.log.model,
          audio: {
            input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: { type: 'server_vad', silence_duration_ms: 500, create_response: true, interrupt_response: true } },
            output: { voice: 'alloy' },
          },
        }
        send(ws, { type: 'session.created', session: { id: 'sess_fake', object: 'realtime.session', ...ws.data.log.session } })
      },
      message(ws, message) {
        let e: any
        try {
          e = JSON.parse(String(message))
        } catch {
          return error(ws, 'invalid_request_error', 'invalid_json', 'The message is not valid JSON.')
        }
        clientEvent(ws, e)
        if (e.type === 'input_audio_buffer.append') ws.data.log.audioMs = ws.data.audio.ms
      },
    },
  })
  fake.origin = `http://127.0.0.1:${server.port}`
  fake.baseUrl = `${fake.origin}/v1`
  return fake
}
