/**
 * WebRTC for browser calls, behind the same transport port as the WebSocket bridge
 * (`MediaCalls.attach`): the browser sends an SDP offer, we answer with werift (WebRTC in pure
 * TypeScript — mediasoup's worker cannot be built on these machines), and once ICE and DTLS are up
 * the call's pipeline gets the same frames it gets from a socket:
 * - in: Opus RTP → decoded to 16 kHz PCM (opusscript, libopus in WebAssembly) → audio frames;
 * - out: audio frames → 20 ms Opus packets, paced in real time (one per 20 ms, as a line plays
 *   them), each `mark` reported back to the pipeline once the audio before it has been sent, and
 *   `clear` dropping what is queued at once (its marks reported, as Twilio does);
 * - the browser's jitter buffer, Opus and NAT traversal (ICE) come with WebRTC itself;
 * - hang-up: a `stop` on the `control` data channel, or the connection failing or closing.
 */
import OpusScript from 'opusscript'
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, type RTCRtpTransceiver, RtpHeader, RtpPacket } from 'werift'
import { type Cancel, type Clock, systemClock } from '../clock'
import { resample } from './codecs'
import type { InboundFrame, OutboundFrame } from './frames'
import type { LiveCall, MediaCalls } from './media-calls'

/** Opus's RTP clock is always 48 kHz (RFC 7587); we code speech at 16 kHz, what the speech engines take. */
const RTP_CLOCK = 48_000
const RATE = 16_000
/** 20 ms packets: WebRTC's default Opus ptime. */
const FRAME_MS = 20
const FRAME = (RATE * FRAME_MS) / 1000
/** ICE, DTLS and SRTP must be up within 15 s of the answer (browsers give up around then too). */
export const CONNECT_TIMEOUT_MS = 15_000

export interface WebRtcAnswer {
  sdp: string
}

/** Answers a browser's offer for a call and, once connected, attaches the call's pipeline. */
export async function answerWebRtc(
  calls: MediaCalls,
  callId: string,
  token: string,
  offer: string,
  log: (message: string, err?: unknown) => void,
  clock: Pick<Clock, 'after' | 'every'> = systemClock,
): Promise<WebRtcAnswer> {
  const pc = new RTCPeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: RTP_CLOCK, channels: 2 })] },
    // Loopback too: a browser on the same machine (development, tests) reaches us there.
    iceAdditionalHostAddresses: ['127.0.0.1'],
  })
  await pc.setRemoteDescription({ type: 'offer', sdp: offer })
  const transceiver = pc.getTransceivers().find((t) => t.kind === 'audio')
  if (!transceiver) {
    await pc.close()
    throw new Error('the offer has no audio')
  }
  transceiver.setDirection('sendrecv')
  const outTrack = new MediaStreamTrack({ kind: 'audio' })
  await transceiver.sender.replaceTrack(outTrack)
  const link = new WebRtcLink(pc, transceiver, outTrack, clock)
  await pc.setLocalDescription(await pc.createAnswer())
  if (pc.iceGatheringState !== 'complete') await new Promise<void>((done) => pc.iceGatheringStateChange.subscribe((s) => s === 'complete' && done()))

  const stopConnectWait = clock.after(CONNECT_TIMEOUT_MS, () => void link.close())
  pc.connectionStateChange.subscribe((state) => {
    if (state === 'connected' && !link.started) {
      stopConnectWait()
      link.started = true
      void link.attach(calls, callId, token).catch((err) => {
        log('a WebRTC call could not be attached', err)
        void link.close()
      })
    } else if (state === 'failed' || state === 'closed') {
      stopConnectWait()
      link.ended('lost', `the WebRTC connection ${state}`)
    }
  })
  return { sdp: pc.localDescription!.sdp }
}

class WebRtcLink {
  started = false
  private call: LiveCall | null = null
  private over = false
  private readonly decoder = new OpusScript(RATE, 1, OpusScript.Application.VOIP)
  private readonly encoder = new OpusScript(RATE, 1, OpusScript.Application.VOIP)
  /** What is waiting to be sent: 16 kHz PCM and marks, in order. */
  private queue: (Int16Array | { mark: string })[] = []
  private sequence = Math.floor(Math.random() * 0xffff)
  private timestamp = Math.floor(Math.random() * 0xffffffff)
  private chunk = 0
  private stopPacer: Cancel | null = null

  constructor(
    private readonly pc: RTCPeerConnection,
    private readonly transceiver: RTCRtpTransceiver,
    private readonly outTrack: MediaStreamTrack,
    private readonly clock: Pick<Clock, 'every'>,
  ) {
    pc.onDataChannel.subscribe((channel) => {
      channel.onMessage.subscribe((data) => {
        if (String(data) === 'stop') this.ended('stop')
      })
    })
  }

  async attach(calls: MediaCalls, callId: string, token: string): Promise<void> {
    const attached = await calls.attach(
      callId,
      token,
      { streamId: `webrtc-${callId}`, callRef: callId, sampleRate: RATE, encoding: 'audio/l16', customParameters: { transport: 'webrtc' } },
      {
        send: (f) => this.send(f),
        close: () => void this.close(),
      },
    )
    if ('refused' in attached) throw new Error(attached.refused)
    if (this.over) return attached.call.ended('lost', 'the WebRTC connection closed while the call was attached')
    this.call = attached.call
    this.transceiver.receiver.tracks[0]?.onReceiveRtp.subscribe((rtp) => this.receive(rtp.payload))
    this.stopPacer = this.clock.every(FRAME_MS, () => this.tick())
  }

  ended(how: 'stop' | 'lost', detail?: string): void {
    if (this.over) return
    const call = this.call
    this.call = null
    call?.ended(how, detail)
    void this.close()
  }

  async close(): Promise<void> {
    if (this.over) return
    this.over = true
    this.stopPacer?.()
    this.call?.ended('lost', 'the WebRTC connection closed')
    this.call = null
    this.decoder.delete()
    this.encoder.delete()
    await this.pc.close().catch(() => {})
  }

  private receive(payload: Buffer): void {
    if (!this.call || this.over) return
    let pcm: Int16Array
    try {
      const out = this.decoder.decode(payload)
      pcm = new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength))
    } catch {
      return // a packet libopus cannot read is lost audio, as on any line
    }
    const frame: InboundFrame = { kind: 'audio', pcm, sampleRate: RATE, chunk: ++this.chunk, timestamp: this.chunk * FRAME_MS }
    this.call.frame(frame)
  }

  private send(frame: OutboundFrame): boolean {
    if (this.over) return false
    if (frame.kind === 'clear') {
      const marks = this.queue.filter((q): q is { mark: string } => !(q instanceof Int16Array))
      this.queue = []
      for (const m of marks) this.call?.frame({ kind: 'mark', name: m.mark })
    } else if (frame.kind === 'mark') this.queue.push({ mark: frame.name })
    else this.queue.push(resample(frame.pcm, frame.sampleRate, RATE))
    return true
  }

  /** Every 20 ms: the next 20 ms of the agent's audio goes out; marks passed on the way are reported after it. */
  private tick(): void {
    const frame = new Int16Array(FRAME)
    let filled = 0
    const marks: string[] = []
    while (this.queue.length && filled < FRAME) {
      const head = this.queue.shift()!
      if (!(head instanceof Int16Array)) {
        marks.push(head.mark)
        continue
      }
      const take = Math.min(FRAME - filled, head.length)
      frame.set(head.subarray(0, take), filled)
      filled += take
      if (take < head.length) this.queue.unshift(head.subarray(take))
    }
    if (filled) {
      // A short tail is padded with silence: Opus packets are whole frames.
      const packet = this.encoder.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), FRAME)
      const header = new RtpHeader({ payloadType: this.transceiver.sender.codec?.payloadType ?? 111, sequenceNumber: this.sequence, timestamp: this.timestamp, marker: false })
      this.sequence = (this.sequence + 1) & 0xffff
      this.timestamp = (this.timestamp + (RTP_CLOCK * FRAME_MS) / 1000) >>> 0
      this.outTrack.writeRtp(new RtpPacket(header, packet))
    }
    for (const name of marks) this.call?.frame({ kind: 'mark', name })
  }
}
