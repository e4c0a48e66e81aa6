/**
 * The media bridge: `GET /media/{callId}` (or `/media/{callId}/{token}`) upgraded to a WebSocket
 * that speaks Twilio Media Streams. Twilio, the sandbox callee and browsers all use it.
 *
 * Life of a socket: messages are parsed by the serializer; until a valid `start` arrives nothing
 * reaches a call (a `start` must come within START_TIMEOUT_MS). The `start` carries the token
 * (path or `customParameters.token`); the call feature checks it and that the try is live, then
 * the call's pipeline takes the frames. After that, a protocol violation, a silent or dead socket
 * ends the call (`hangup: failed`, the reason in `error`) with its transcript kept; a refusal
 * before it (bad token, unknown or ended call) closes only this socket. Nothing a socket sends
 * can throw past this file: every other call in the process is undisturbed.
 */
import { Elysia, t } from 'elysia'
import { type Cancel, type Clock, systemClock } from '../clock'
import type { InboundFrame, OutboundFrame } from './frames'
import type { Attached, LiveCall, MediaCalls, Refusal } from './media-calls'
import { twilioMediaStreams } from './serializers'
import { type FrameSerializer, ProtocolError, type SerializerFactory } from './serializers/port'

export type { Attached, LiveCall, MediaCalls, Refusal, StreamInfo } from './media-calls'

/** Twilio sends `connected` then `start` at once; 10 s covers a slow network and then some. */
export const START_TIMEOUT_MS = 10_000
/** The line sends audio every 20 ms, silence included: 10 s without a message is a dead stream. */
export const MEDIA_IDLE_MS = 10_000

/** The bridge's paths: no API key, the call's token in the path authenticates them. */
export const MEDIA_PREFIX = '/media/'
/** Frames held while the call is being attached (a few hundred ms): 2 s of 20 ms audio. */
const MAX_EARLY_FRAMES = 100

/** 4401, 4404, 4408 and 4409 read as 401, 404, 408 (the stream went silent) and 409; 1000 is a call that ended normally. */
export const CLOSE = { protocol: 1002, tooBig: 1009, policy: 1008, internal: 1011, badToken: 4401, unknownCall: 4404, silent: 4408, notLive: 4409, ended: 1000 } as const

/**
 * The HTTP status of a refusal answered over HTTP (a WebRTC offer), by its close code: 4401, 4404
 * and 4409 were chosen to read as 401, 404 and 409; any other is the server's failure.
 */
export function refusalStatus(refusal: Refusal): number {
  const status = { [CLOSE.badToken]: 401, [CLOSE.unknownCall]: 404, [CLOSE.notLive]: 409 }[refusal.code]
  return status ?? 500
}

interface Socket {
  send(data: string): number
  close(code?: number, reason?: string): void
}

/** One socket's state: the protocol, then the call. */
export class MediaStream {
  private readonly serializer: FrameSerializer
  private call: LiveCall | null = null
  private attaching = false
  private early: InboundFrame[] = []
  private closed = false
  private lastChunk = -1
  private readonly stopStartWait: Cancel
  private stopIdleWait: Cancel | null = null
  /** Late or repeated audio chunks dropped (the network reordered them). */
  droppedChunks = 0

  constructor(
    private readonly socket: Socket,
    private readonly calls: MediaCalls,
    private readonly callId: string,
    private readonly pathToken: string | undefined,
    private readonly timing = { startMs: START_TIMEOUT_MS, idleMs: MEDIA_IDLE_MS },
    serializer: SerializerFactory = twilioMediaStreams,
    private readonly clock: Pick<Clock, 'after'> = systemClock,
  ) {
    this.serializer = serializer()
    this.stopStartWait = clock.after(timing.startMs, () => this.fail(CLOSE.policy, 'no "start" message in time'))
  }

  message(raw: unknown): void {
    if (this.closed) return
    if (this.call) this.touch()
    let frame: InboundFrame | null
    try {
      const max = this.serializer.maxMessageBytes
      if (typeof raw === 'string' && raw.length > max) {
        this.fail(CLOSE.tooBig, `message over ${max} bytes`)
        return
      }
      if (raw instanceof Uint8Array || raw instanceof ArrayBuffer) throw new ProtocolError('binary messages are not part of the protocol')
      frame = this.serializer.deserialize(raw)
    } catch (err) {
      this.fail(CLOSE.protocol, err instanceof Error ? err.message : String(err))
      return
    }
    if (!frame) return
    if (frame.kind === 'start') {
      void this.start(frame)
      return
    }
    if (frame.kind === 'stop') {
      this.finish('stop')
      return
    }
    if (frame.kind === 'audio') {
      if (frame.chunk && frame.chunk <= this.lastChunk) {
        this.droppedChunks++
        return
      }
      if (frame.chunk) this.lastChunk = frame.chunk
    }
    if (this.call) this.call.frame(frame)
    else if (this.attaching && this.early.length < MAX_EARLY_FRAMES) this.early.push(frame)
  }

  drain(): void {
    this.call?.drained()
  }

  /** The socket closed under us. */
  socketClosed(code: number, reason: string): void {
    if (this.closed) return
    this.finish('lost', `the media socket closed (${code}${reason ? ` ${reason}` : ''}) without "stop"`)
  }

  private async start(frame: Extract<InboundFrame, { kind: 'start' }>): Promise<void> {
    this.stopStartWait()
    this.attaching = true
    const token = this.pathToken ?? frame.customParameters.token
    const io = {
      send: (f: OutboundFrame) => {
        if (this.closed) return false
        const message = this.serializer.serialize(f)
        // Bun: -1 = queued behind backpressure (drain follows), 0 = dropped, >0 = sent.
        return message === null ? true : this.socket.send(message) > 0
      },
      close: (code: number, reason: string) => this.close(code, reason),
    }
    let attached: Attached
    try {
      attached = await this.calls.attach(
        this.callId,
        token,
        { streamId: frame.streamId, callRef: frame.callRef, sampleRate: frame.sampleRate, encoding: frame.encoding, customParameters: frame.customParameters },
        io,
      )
    } catch (err) {
      attached = { refused: `the call could not be attached: ${(err as Error).message}`, code: CLOSE.internal }
    }
    this.attaching = false
    if ('refused' in attached) return this.close(attached.code, attached.refused)
    if (this.closed) return attached.call.ended('lost', 'the media socket closed while the call was attached')
    this.call = attached.call
    this.touch()
    for (const f of this.early.splice(0)) this.call.frame(f)
  }

  private touch(): void {
    this.stopIdleWait?.()
    this.stopIdleWait = this.clock.after(this.timing.idleMs, () => this.finish('lost', `no media for ${this.timing.idleMs / 1000} s`, CLOSE.silent))
  }

  /** A protocol failure: ends the call if one is attached, and the socket. */
  private fail(code: number, reason: string): void {
    if (this.call) this.call.ended('protocol', reason)
    this.call = null
    this.close(code, reason)
  }

  /** `code`: a stream that went silent is an error the other side is told of (4408), not a normal end. */
  private finish(how: 'stop' | 'lost', detail?: string, code: number = CLOSE.ended): void {
    const call = this.call
    this.call = null
    call?.ended(how, detail)
    this.close(code, how === 'stop' ? 'stream stopped' : (detail ?? 'lost'))
  }

  private close(code: number, reason: string): void {
    if (this.closed) return
    this.closed = true
    this.stopStartWait()
    this.stopIdleWait?.()
    // Close reasons are at most 123 bytes (RFC 6455 §5.5).
    try {
      this.socket.close(code, reason.slice(0, 120))
    } catch {
      /* already closing */
    }
  }
}

/** The route. One MediaStream per socket, keyed by Elysia's socket id; `serializer` is the line's protocol (`serializerFor`, serializers/index.ts). */
export function mediaBridge(
  calls: MediaCalls,
  log: (message: string, err?: unknown) => void = () => {},
  serializer: SerializerFactory = twilioMediaStreams,
  clock: Pick<Clock, 'after' | 'every'> = systemClock,
) {
  const streams = new Map<string, MediaStream>()
  const handlers = {
    beforeHandle({ request, set }: { request: Request; set: { status?: number | string } }) {
      const refused = calls.checkUpgrade(request)
      if (refused) {
        set.status = 403
        return { error: refused }
      }
    },
    open(ws: { id: string; raw: Socket; data: { params: Record<string, string> } }) {
      streams.set(ws.id, new MediaStream(ws.raw, calls, ws.data.params.callId!, ws.data.params.token, undefined, serializer, clock))
    },
    message(ws: { id: string }, message: unknown) {
      streams.get(ws.id)?.message(message)
    },
    drain(ws: { id: string }) {
      streams.get(ws.id)?.drain()
    },
    close(ws: { id: string }, code: number, reason: string) {
      streams.get(ws.id)?.socketClosed(code, reason)
      streams.delete(ws.id)
    },
    detail: { hide: true },
  }
  return new Elysia({ name: 'media-bridge' })
    .ws('/media/:callId', handlers)
    .ws('/media/:callId/:token', handlers)
    .post(
      '/media/:callId/:token/webrtc',
      async ({ params, body, set }) => {
        // The same call and token as the socket path; refused before any connection is set up.
        const refusal = await calls.refusal(params.callId, params.token)
        if (refusal) {
          set.status = refusalStatus(refusal)
          return { error: refusal.refused }
        }
        try {
          // Loaded on the first WebRTC call: werift and libopus (WebAssembly) cost ~10 MB a process that never uses them need not hold.
          const { answerWebRtc } = await import('./webrtc')
          return await answerWebRtc(calls, params.callId, params.token, body.sdp, log, clock)
        } catch (err) {
          set.status = 400
          return { error: `sdp: ${(err as Error).message}` }
        }
      },
      { body: t.Object({ sdp: t.String({ minLength: 1, maxLength: 20_000 }) }, { additionalProperties: false }), detail: { hide: true } },
    )
}
