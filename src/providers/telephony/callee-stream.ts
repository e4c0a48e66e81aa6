/**
 * The sandbox callee's side of a Twilio Media Streams socket, as Twilio speaks it to our media
 * bridge: `connected` and `start` once open, then 20 ms `media` frames of mu-law, `mark` echoes,
 * and `stop` when the callee hangs up.
 */
import WebSocket from 'ws'
import { randomId } from '../../ids'
import { PHONE_RATE } from '../../voice/public'

/** Twilio sends 20 ms frames. */
export const FRAME_MS = 20
/** Samples (and mu-law bytes) in one frame. */
export const FRAME = (PHONE_RATE * FRAME_MS) / 1000
/** Mu-law silence. */
const SILENCE = 0xff

export interface StreamEvents {
  message: (raw: string) => void
  /** The socket closed, whoever closed it (the close code). */
  closed: (code: number) => void
  error: () => void
}

export class CalleeStream {
  private ws: WebSocket | null = null
  private readonly streamSid = `MZ${randomId(32)}`

  constructor(
    private readonly url: string,
    private readonly callSid: string,
  ) {}

  /** Opens the socket and sends `connected` and `start`. */
  async open(on: StreamEvents): Promise<void> {
    const ws = new WebSocket(this.url)
    this.ws = ws
    ws.on('message', (data) => on.message(String(data)))
    ws.on('close', (code) => on.closed(code))
    ws.on('error', () => on.error())
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('error', reject)
    })
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' })
    this.send({
      event: 'start',
      sequenceNumber: '1',
      start: {
        streamSid: this.streamSid,
        accountSid: 'ACsandbox',
        callSid: this.callSid,
        tracks: ['inbound'],
        customParameters: {},
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: PHONE_RATE, channels: 1 },
      },
      streamSid: this.streamSid,
    })
  }

  /** Whether the socket is closing or closed. */
  get gone(): boolean {
    return this.ws !== null && this.ws.readyState >= WebSocket.CLOSING
  }

  /** Frame `chunk` (from 1) of mu-law; a short one is padded with silence, none is silence. */
  media(chunk: number, payload: Uint8Array | null): void {
    const full = new Uint8Array(FRAME).fill(SILENCE)
    if (payload) full.set(payload.subarray(0, FRAME))
    this.send({
      event: 'media',
      sequenceNumber: String(chunk + 1),
      media: { track: 'inbound', chunk: String(chunk), timestamp: String(chunk * FRAME_MS), payload: Buffer.from(full).toString('base64') },
      streamSid: this.streamSid,
    })
  }

  /** Echoes a mark, after frame `chunk`. */
  mark(chunk: number, name: string): void {
    this.send({ event: 'mark', sequenceNumber: String(chunk + 1), streamSid: this.streamSid, mark: { name } })
  }

  /** `stop` after frame `chunk`, then the socket closes. */
  stop(chunk: number): void {
    this.send({ event: 'stop', sequenceNumber: String(chunk + 2), streamSid: this.streamSid, stop: { accountSid: 'ACsandbox', callSid: this.callSid } })
    this.ws?.close(1000)
  }

  private send(message: object): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message))
  }
}
