/**
 * OpenAI's Realtime API, a speech-to-speech model, over WebSocket (GA protocol):
 * https://platform.openai.com/docs/guides/realtime-websocket, the events
 * https://platform.openai.com/docs/api-reference/realtime-client-events and
 * https://platform.openai.com/docs/api-reference/realtime-server-events, checked against
 * https://github.com/openai/openai-node/blob/master/src/resources/realtime/realtime.ts.
 *
 * `wss://api.openai.com/v1/realtime?model=<model>` with `Authorization: Bearer <key>` (the GA
 * interface takes no `OpenAI-Beta` header). The first server event is `session.created`; we then
 * send `session.update` with `type: "realtime"`, G.711 μ-law (`audio/pcmu`) both ways, the voice,
 * the instructions, the tools and the turn detection. A key the API refuses is an `error` event
 * (`invalid_api_key`) and a close, or a 401 on the upgrade: either fails the connect with the
 * vendor's words.
 */
import WebSocket from 'ws'
import type { RealtimeEvent, RealtimeLink } from '../../voice/public'

export { type RealtimeEvent, type RealtimeUsage, usageOf } from '../../voice/public'

/** The Realtime voices (https://platform.openai.com/docs/api-reference/realtime-client-events/session/update, `audio.output.voice`). */
export const REALTIME_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const

/** A model id OpenAI serves over the Realtime API (gpt-realtime, gpt-4o-realtime-preview, their dated and mini forms). */
export const isRealtimeModel = (id: string): boolean => /(^|-)realtime(-|$)/.test(id)

/**
 * `server_vad`: the model's silence VAD ends the turn; `semantic_vad`: the model judges the words
 * (https://platform.openai.com/docs/guides/realtime-vad); `service_vad`: the model's VAD is off
 * (`turn_detection: null`) and ours ends the turn with `input_audio_buffer.commit` and `response.create`.
 */
export type RealtimeTurnDetection = 'server_vad' | 'semantic_vad' | 'service_vad'

/**
 * The session opens within a second or two; 10 s is the API not answering (the same bound as the
 * catalogue's requests, providers/catalog.ts CATALOG_TIMEOUT_MS).
 */
export const CONNECT_TIMEOUT_MS = 10_000

export interface RealtimeTool {
  name: string
  description: string
  parameters: object
}

export interface RealtimeOptions {
  apiKey: string
  /** https://api.openai.com/v1 or a fake's; the socket is its ws(s) form + `/realtime`. */
  baseUrl: string
  model: string
  voice: string
  instructions: string
  tools: RealtimeTool[]
  turnDetection: RealtimeTurnDetection
  /** The caller's words are transcribed by this model (`audio.input.transcription`). */
  transcriptionModel?: string
  language?: string
}

/** The API refused or failed: its own words (`error.message`, with the code). */
export class RealtimeError extends Error {
  override readonly name = 'RealtimeError'
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message)
  }
}

const errorOf = (e: { code?: string | null; message: string }) => new RealtimeError(`OpenAI Realtime: ${e.message}${e.code ? ` (${e.code})` : ''}`, e.code ?? null)

/** The session.update that configures a call (GA shape: `session.type`, `audio.input` / `audio.output`). */
export function sessionUpdate(o: RealtimeOptions): object {
  const turn = o.turnDetection === 'service_vad' ? null : { type: o.turnDetection, create_response: true, interrupt_response: true }
  return {
    type: 'session.update',
    session: {
      type: 'realtime',
      instructions: o.instructions,
      output_modalities: ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: { model: o.transcriptionModel ?? 'gpt-4o-mini-transcribe', ...(o.language ? { language: o.language } : {}) },
          turn_detection: turn,
        },
        output: { format: { type: 'audio/pcmu' }, voice: o.voice },
      },
      tools: o.tools.map((t) => ({ type: 'function', ...t })),
      tool_choice: 'auto',
    },
  }
}

/** One open Realtime session. */
export class RealtimeConnection implements RealtimeLink {
  private readonly listeners: ((e: RealtimeEvent) => void)[] = []
  private closedWith: ((reason: RealtimeError | null) => void)[] = []
  private ended = false

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      let event: RealtimeEvent
      try {
        event = JSON.parse(String(data))
      } catch {
        return
      }
      for (const l of this.listeners) l(event)
    })
    ws.on('close', (code, reason) => this.finish(code === 1000 ? null : new RealtimeError(`OpenAI Realtime closed the session (${code}${reason.length ? `: ${reason}` : ''})`, null)))
    ws.on('error', (err) => this.finish(new RealtimeError(`OpenAI Realtime: ${err.message}`, null)))
  }

  /** Opens the socket, waits for `session.created`, configures the session. Throws RealtimeError with the API's reason. */
  static async open(o: RealtimeOptions): Promise<RealtimeConnection> {
    const url = `${o.baseUrl.replace(/^http/, 'ws').replace(/\/$/, '')}/realtime?model=${encodeURIComponent(o.model)}`
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${o.apiKey}` } })
    const hide = (m: string) => m.split(o.apiKey).join('***')
    const conn = new RealtimeConnection(ws)
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new RealtimeError('OpenAI Realtime did not open a session in time', null)), CONNECT_TIMEOUT_MS)
      const fail = (err: RealtimeError) => {
        clearTimeout(timer)
        ws.terminate()
        reject(new RealtimeError(hide(err.message), err.code))
      }
      ws.once('unexpected-response', (_req, res) => fail(new RealtimeError(`OpenAI Realtime refused the connection (HTTP ${res.statusCode})`, String(res.statusCode))))
      conn.onClose((reason) => fail(reason ?? new RealtimeError('OpenAI Realtime closed before the session opened', null)))
      const off = conn.on((e) => {
        if (e.type === 'error') return fail(errorOf(e.error))
        if (e.type !== 'session.created') return
        off()
        clearTimeout(timer)
        conn.closedWith = []
        resolve()
      })
    })
    conn.send(sessionUpdate(o))
    return conn
  }

  on(listener: (e: RealtimeEvent) => void): () => void {
    this.listeners.push(listener)
    return () => {
      const i = this.listeners.indexOf(listener)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  /** The socket closed: null when we closed it, else why. */
  onClose(listener: (reason: RealtimeError | null) => void): void {
    this.closedWith.push(listener)
  }

  send(event: object): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(event))
  }

  /** The caller's μ-law, as the line carried it. */
  append(mulaw: Uint8Array): void {
    this.send({ type: 'input_audio_buffer.append', audio: Buffer.from(mulaw).toString('base64') })
  }

  /** Stops the response being made (barge-in). */
  cancel(): void {
    this.send({ type: 'response.cancel' })
  }

  /** Cuts the agent's item to what the caller heard, so the model's context holds only that. */
  truncate(itemId: string, audioEndMs: number): void {
    this.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: Math.max(0, Math.round(audioEndMs)) })
  }

  /** A tool's answer, then a new response that reads it. */
  toolOutput(callId: string, output: unknown): void {
    this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: typeof output === 'string' ? output : JSON.stringify(output) } })
    this.send({ type: 'response.create' })
  }

  /** Our turn detection ended the caller's turn: the buffer becomes their message and the model answers it. */
  commitTurn(): void {
    this.send({ type: 'input_audio_buffer.commit' })
    this.send({ type: 'response.create' })
  }

  /** Asks the model to speak: `instructions` for this response only (the opening line). */
  respond(instructions?: string): void {
    this.send({ type: 'response.create', ...(instructions ? { response: { instructions } } : {}) })
  }

  close(): void {
    if (this.ended) return
    this.ended = true
    this.ws.close(1000)
  }

  private finish(reason: RealtimeError | null): void {
    const listeners = this.closedWith
    this.closedWith = []
    for (const l of listeners) l(this.ended ? null : reason)
    this.ended = true
  }
}
