/**
 * A phone line as Twilio carries it, for line tests: a real Media Streams client of the service's
 * `/media/{id}` socket (https://www.twilio.com/docs/voice/media-streams/websocket-messages),
 * signed as Twilio signs the upgrade, that keeps real time on a 20 ms tick:
 *  - in: every tick it sends the caller's next 20 ms of μ-law (silence unless the test queued
 *    speech), as Twilio streams the inbound track continuously;
 *  - out: the agent's `media` is buffered and played 20 ms a tick, a `mark` is echoed once the
 *    audio before it has played, and `clear` empties the buffer and echoes the marks still in it
 *    (Twilio's documented behaviour).
 * It knows nothing of the service's insides: everything it records is what crossed the socket,
 * stamped with this process's clock.
 */
import { spawnSync } from 'node:child_process'
import WebSocket from 'ws'
import { twilioSignature } from '../../src/providers/telephony/twilio-signature'
import { decodeMulaw, encodeMulaw, PHONE_RATE, resample } from '../../src/voice/codecs'
import { streamOpening } from '../fakes/twilio'

/** Twilio's frame: 20 ms of 8 kHz μ-law. */
export const FRAME_SAMPLES = 160
export const FRAME_MS = 20
/** Below this a frame counts as silence (the measure of audible agent audio). */
export const AUDIBLE_DBFS = -45

/** A frame's level; digital silence is -120 (a finite number, so it survives JSON). */
export const dbfs = (pcm: Int16Array): number => {
  let sum = 0
  for (const s of pcm) sum += s * s
  const rms = Math.sqrt(sum / Math.max(1, pcm.length))
  return rms > 0 ? Math.max(-120, 20 * Math.log10(rms / 32768)) : -120
}

/**
 * A caller's words as espeak-ng (at `espeak`) says them at a brisk rate (`-v en-us -s 220 -a 180`),
 * through the line's μ-law at 8 kHz, leading silence trimmed: the first frame is speech.
 */
export function callerSpeech(espeak: string, text: string): Int16Array {
  const wav = spawnSync(espeak, ['--stdout', '-v', 'en-us', '-s', '220', '-a', '180', '--', text], { maxBuffer: 16 << 20 }).stdout
  const pcm22k = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.byteLength - (wav.byteLength % 2)))
  const line = decodeMulaw(encodeMulaw(resample(pcm22k, 22_050, PHONE_RATE)))
  let first = 0
  while (first + FRAME_SAMPLES <= line.length && dbfs(line.subarray(first, first + FRAME_SAMPLES)) <= AUDIBLE_DBFS) first += FRAME_SAMPLES
  return line.subarray(first)
}

/** One tick of the agent's audio as the caller heard it. */
export interface Played {
  at: number
  /** Samples of agent audio played in this tick (0: the buffer was empty). */
  samples: number
  dbfs: number
}

export interface LineLog {
  /** When each `media` message from the service arrived, with its level. */
  media: { at: number; samples: number; dbfs: number }[]
  played: Played[]
  clears: number[]
  /** Marks echoed because their audio played, and those echoed because a `clear` dropped them. */
  marksPlayed: string[]
  marksCleared: string[]
  /** When each queued caller frame left, and whether it was speech (louder than AUDIBLE_DBFS). */
  callerFrames: { at: number; speech: boolean }[]
}

/** What a barge-in looked like on the wire, judged from a line's log once the caller's words have all left. */
export interface BargeIn {
  firstSpeechAt: number
  lastSpeechAt: number
  /** The first `clear` the line received, or null: none at all. */
  clearedAt: number | null
  /** From the caller's first speech frame to that clear (null: none). */
  clearMs: number | null
  /** Audible agent audio the caller heard after the clear while still speaking (none: after the last speech frame, so 0). */
  audibleAfterClearMs: number
  /** Audible agent audio the caller heard from their first speech frame to their last. */
  audibleAfterFirstFrameMs: number
}

export function judgeBargeIn(log: LineLog): BargeIn {
  const first = log.callerFrames.find((f) => f.speech)
  const last = log.callerFrames.findLast((f) => f.speech)
  if (!first || !last) throw new Error('the caller sent no speech frame')
  const clearedAt = log.clears[0] ?? null
  const audible = (from: number) => log.played.filter((p) => p.at > from && p.at <= last.at + FRAME_MS && p.samples > 0 && p.dbfs > AUDIBLE_DBFS).length * FRAME_MS
  return {
    firstSpeechAt: first.at,
    lastSpeechAt: last.at,
    clearedAt,
    clearMs: clearedAt === null ? null : clearedAt - first.at,
    audibleAfterClearMs: audible(clearedAt ?? last.at),
    audibleAfterFirstFrameMs: audible(first.at - 1),
  }
}

export class TwilioLine {
  readonly log: LineLog = { media: [], played: [], clears: [], marksPlayed: [], marksCleared: [], callerFrames: [] }
  private readonly socket: WebSocket
  private readonly buffer: ({ pcm: Int16Array } | { mark: string })[] = []
  private readonly caller: Uint8Array[] = []
  private timer: ReturnType<typeof setTimeout> | null = null
  private ticks = 0
  private startedAt = 0
  private chunk = 0
  private readonly silence = encodeMulaw(new Int16Array(FRAME_SAMPLES))
  private readonly tickListeners: ((line: TwilioLine) => void)[] = []
  /** The agent's audio leaking back into the caller's line (a speakerphone): its gain and the delay's samples of history. */
  private leakage: { gain: number; history: Int16Array } | null = null

  private constructor(
    socket: WebSocket,
    private readonly streamSid: string,
  ) {
    this.socket = socket
    socket.on('message', (data) => this.received(JSON.parse(String(data))))
  }

  /** Opens the stream at `wsUrl` as Twilio would (signed upgrade, `connected`, `start` with the token). */
  static async open(wsUrl: string, opts: { authToken: string; accountSid: string; callSid: string; token: string }): Promise<TwilioLine> {
    const socket = new WebSocket(wsUrl, { headers: { 'x-twilio-signature': twilioSignature(opts.authToken, wsUrl, {}) } })
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve())
      socket.once('error', reject)
      socket.once('unexpected-response', (_req, res) => reject(new Error(`media upgrade refused: ${res.statusCode}`)))
    })
    const streamSid = `MZ${crypto.randomUUID().replaceAll('-', '')}`
    const line = new TwilioLine(socket, streamSid)
    for (const message of streamOpening({ streamSid, accountSid: opts.accountSid, callSid: opts.callSid, token: opts.token })) socket.send(message)
    line.run()
    return line
  }

  /** Queues the caller's speech (8 kHz PCM) to go out from the next tick on, 20 ms a tick. */
  say(pcm: Int16Array): void {
    for (let at = 0; at + FRAME_SAMPLES <= pcm.length; at += FRAME_SAMPLES) this.caller.push(encodeMulaw(pcm.subarray(at, at + FRAME_SAMPLES)))
  }

  /** From now on the agent's audio as played leaks back into what the caller sends, `db` down after `delayMs` (a speakerphone with no echo cancelling). */
  leak(db: number, delayMs: number): void {
    this.leakage = { gain: 10 ** (db / 20), history: new Int16Array(Math.round((delayMs * 8000) / 1000) + FRAME_SAMPLES) }
  }

  /** Runs `fn` after every tick (after this tick's audio played and the caller's frame left). */
  onTick(fn: (line: TwilioLine) => void): void {
    this.tickListeners.push(fn)
  }

  /** Agent audio played so far, in ms. */
  get playedMs(): number {
    return (this.log.played.reduce((n, p) => n + p.samples, 0) * 1000) / 8000
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ event: 'stop', streamSid: this.streamSid, stop: { accountSid: '', callSid: '' } }))
      this.socket.close()
    }
  }

  private received(m: { event: string; media?: { payload: string }; mark?: { name: string } }): void {
    const at = performance.now()
    if (m.event === 'media' && m.media) {
      const pcm = decodeMulaw(Buffer.from(m.media.payload, 'base64'))
      this.log.media.push({ at, samples: pcm.length, dbfs: dbfs(pcm) })
      this.buffer.push({ pcm })
    } else if (m.event === 'mark' && m.mark) {
      this.buffer.push({ mark: m.mark.name })
      this.echoDue()
    } else if (m.event === 'clear') {
      this.log.clears.push(at)
      for (const item of this.buffer.splice(0)) if ('mark' in item) this.echo(item.mark, this.log.marksCleared)
    }
  }

  /** Real time: tick n is due at start + n × 20 ms; a late timer catches up tick by tick, as a jittery line would. */
  private run(): void {
    this.startedAt = performance.now()
    const step = () => {
      this.timer = null
      while (performance.now() >= this.startedAt + this.ticks * FRAME_MS) {
        this.ticks++
        this.tick()
      }
      if (this.socket.readyState !== WebSocket.OPEN) return
      this.timer = setTimeout(step, Math.max(0, this.startedAt + this.ticks * FRAME_MS - performance.now()))
    }
    step()
  }

  private tick(): void {
    if (this.socket.readyState !== WebSocket.OPEN) return
    const at = performance.now()
    // Play up to one frame of the agent's audio.
    const out = new Int16Array(FRAME_SAMPLES)
    let filled = 0
    while (filled < FRAME_SAMPLES && this.buffer.length) {
      const head = this.buffer[0]!
      if ('mark' in head) {
        this.buffer.shift()
        this.echo(head.mark, this.log.marksPlayed)
        continue
      }
      const take = Math.min(FRAME_SAMPLES - filled, head.pcm.length)
      out.set(head.pcm.subarray(0, take), filled)
      filled += take
      if (take === head.pcm.length) this.buffer.shift()
      else head.pcm = head.pcm.subarray(take)
    }
    this.echoDue()
    this.log.played.push({ at, samples: filled, dbfs: filled ? dbfs(out.subarray(0, filled)) : -120 })
    // Send the caller's next frame.
    const queued = this.caller.shift()
    let payload = queued ?? this.silence
    if (this.leakage) payload = this.leaked(out, payload)
    if (queued) this.log.callerFrames.push({ at, speech: dbfs(decodeMulaw(queued)) > AUDIBLE_DBFS })
    this.chunk++
    this.socket.send(
      JSON.stringify({
        event: 'media',
        sequenceNumber: String(this.chunk + 1),
        streamSid: this.streamSid,
        media: { track: 'inbound', chunk: String(this.chunk), timestamp: String(this.chunk * FRAME_MS), payload: Buffer.from(payload).toString('base64') },
      }),
    )
    for (const fn of this.tickListeners) fn(this)
  }

  /** The caller's frame with the agent's audio of `delay` ago mixed in. */
  private leaked(played: Int16Array, payload: Uint8Array): Uint8Array {
    const { gain, history } = this.leakage!
    history.copyWithin(0, FRAME_SAMPLES)
    history.set(played, history.length - FRAME_SAMPLES)
    const caller = decodeMulaw(payload)
    const mixed = new Int16Array(FRAME_SAMPLES)
    for (let i = 0; i < FRAME_SAMPLES; i++) mixed[i] = Math.max(-32768, Math.min(32767, Math.round(caller[i]! + gain * history[i]!)))
    return encodeMulaw(mixed)
  }

  /** Marks at the head of the buffer have had all audio before them played. */
  private echoDue(): void {
    while (this.buffer.length && 'mark' in this.buffer[0]!) this.echo((this.buffer.shift() as { mark: string }).mark, this.log.marksPlayed)
  }

  private echo(name: string, into: string[]): void {
    into.push(name)
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ event: 'mark', sequenceNumber: '0', streamSid: this.streamSid, mark: { name } }))
  }
}

export interface CallerScript {
  wsUrl: string
  authToken: string
  accountSid: string
  callSid: string
  token: string
  /** The caller's words, 8 kHz PCM, said once `bargeInAtMs` of the agent's audio has played. */
  speech: Int16Array
  bargeInAtMs: number
}

/**
 * The line in a process of its own, as Twilio is a system of its own: a stall of the service's
 * process then delays what the service sends, not when the line notices it. The child
 * (twilio-caller.ts) says `spoken` once the caller's last frame has left, and answers `log`
 * with everything it recorded; closing its stdin hangs up.
 */
export class TwilioCaller {
  private readonly lines: AsyncIterator<string>
  private constructor(private readonly proc: Bun.Subprocess<'pipe', 'pipe', 'inherit'>) {
    this.lines = readLines(proc.stdout)
  }

  static start(script: CallerScript): TwilioCaller {
    const speech = Buffer.from(script.speech.buffer, script.speech.byteOffset, script.speech.byteLength).toString('base64')
    const proc = Bun.spawn([process.execPath, `${import.meta.dir}/twilio-caller.ts`, JSON.stringify({ ...script, speech })], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
    return new TwilioCaller(proc)
  }

  /** Resolves with the child's next message, which must be `event`. */
  async next(event: string): Promise<Record<string, unknown>> {
    const { value, done } = await this.lines.next()
    if (done) throw new Error(`the line process ended before "${event}" (exit ${await this.proc.exited})`)
    const m = JSON.parse(value) as Record<string, unknown>
    if (m.event !== event) throw new Error(`the line process said ${value}, expected "${event}"`)
    return m
  }

  async log(): Promise<LineLog> {
    this.proc.stdin.write('log\n')
    this.proc.stdin.flush()
    return (await this.next('log')).log as LineLog
  }

  async hangUp(): Promise<void> {
    this.proc.stdin.end()
    const exited = await Promise.race([this.proc.exited, Bun.sleep(5_000).then(() => null)])
    if (exited === null) this.proc.kill('SIGKILL')
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let rest = ''
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true })
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
      yield rest.slice(0, nl)
      rest = rest.slice(nl + 1)
    }
  }
}
