/**
 * bench:soak's callers: each plays Twilio's side of one call's media stream (the opening
 * messages, a 20 ms mu-law frame every 20 ms, the agent's audio played in real time, marks echoed
 * once the audio before them has played, the buffer dropped on `clear`) and speaks as a person
 * does (espeak-ng questions, each waiting for the answer). It records what its caller heard: gaps
 * inside an agent turn, the waits between the agent's frames, and when each question was answered.
 */

import { EspeakTts } from '../src/providers/tts/espeak'
import { encodeMulaw, resample } from '../src/voice/codecs'
import { streamOpening } from '../test/fakes/twilio'

const QUESTIONS = [
  'what time do you open on saturday',
  'can i move my appointment to friday',
  'do i need to bring my insurance card',
  'how long will the visit take',
  'is there parking near the clinic',
]
/**
 * A caller waits this long after its question for the agent to answer before going on anyway: a
 * person on the phone repeats themselves after about that much silence. (Callers that spoke on a
 * fixed cycle talked over every answer still being prepared on a busy host, so the agent withdrew
 * each one as unheard and answered none.)
 */
export const PATIENCE_MS = 8_000
/** The answer is over once the agent's audio has played out and this much silence followed (the chart's turn pause is 500 ms). */
const ANSWER_OVER_MS = 700
/** A caller's first question starts at a random point of this span: over the opening or after it, so that callers do not all speak at once. */
const FIRST_QUESTION_MS = 20_000
/** Audible: 40 ms without audio is two of Twilio's 20 ms frames missing, a clear click or stutter. */
export const GAP_MS = 40
export const FRAME_MS = 20
const FRAME = 160
const RATE_HZ = 8_000
/** A stream not attached, or not sent the agent's first message, this long after its call was answered counts as failed. */
export const ATTACH_TIMEOUT_MS = 10_000
const SILENCE_B64 = Buffer.alloc(FRAME, 0xff).toString('base64')

/** What every caller of a run shares: who is on the line, who has hung up, how long each stays, and the questions they ask (none: silent). */
export interface Callers {
  live: Set<Peer>
  hungUp: Peer[]
  holdMs: number
  questions: string[][]
}

/** One question a caller asked: when its last frame left, and when the agent's audio next arrived (null: not within PATIENCE_MS or the call). */
export interface Question {
  endAt: number
  answeredAt: number | null
  askedFrames: number
}

/** Each question as Twilio's 20 ms mu-law frames, base64. */
export async function questionFrames(): Promise<string[][]> {
  const tts = new EspeakTts()
  const out: string[][] = []
  for (const q of QUESTIONS) {
    const parts: Int16Array[] = []
    for await (const p of tts.synthesize(q, { voice: 'aria', language: 'en' })) parts.push(p)
    const all = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of parts) {
      all.set(p, at)
      at += p.length
    }
    const mulaw = encodeMulaw(resample(all, tts.sampleRate, RATE_HZ))
    const frames: string[] = []
    for (let i = 0; i + FRAME <= mulaw.length; i += FRAME) frames.push(Buffer.from(mulaw.subarray(i, i + FRAME)).toString('base64'))
    out.push(frames)
  }
  return out
}

/** One callee: Twilio's side of a media stream, listening. */
export class Peer {
  ws: WebSocket | null = null
  streamSid = `MZ${crypto.randomUUID().replace(/-/g, '')}`
  chunk = 0
  startedAt = 0
  /** When the agent audio buffered so far will have played; null before any (or after a clear). */
  dryAt: number | null = null
  marks: { name: string; at: number }[] = []
  firstAudioAt: number | null = null
  gaps: { at: number; ms: number }[] = []
  /** Time since the previous agent frame, for each frame after the first: how long the service left this caller on its buffer. */
  waits: number[] = []
  lastAudioAt: number | null = null
  /** The stages of set-up: the POST answered, the answer's status callback answered, the socket open. */
  placedAt = 0
  answeredAt = 0
  openedAt = 0
  done = false
  /** The question being asked: its frames still to send. */
  private script: string[] = []
  /** When this caller asks its next question (set once it has heard the answer to the last, or given up on it). */
  private nextAt = 0
  /** The question last asked, while its caller waits for the answer. */
  private asked: Question | null = null
  /** Every question this caller finished asking, and when the agent's audio next came. */
  readonly questions: Question[] = []
  /** The agent turn of the last audio frame (from the mark after it), and a dry spell before a frame not yet known to be inside that turn. */
  private lastTurn: string | null = null
  private pendingGap: { at: number; ms: number } | null = null

  constructor(
    readonly postedAt: number,
    private readonly callers: Callers,
  ) {}

  open(url: string, signature: string, token: string, callSid: string): Promise<number | null> {
    return new Promise((resolve) => {
      // Bun's WebSocket takes headers: the upgrade carries X-Twilio-Signature as Twilio's does.
      const ws = new WebSocket(url, { headers: { 'x-twilio-signature': signature } } as never)
      this.ws = ws
      let settled = false
      // Nothing from the service in time: a failed attach (1011, as the bridge's own internal error).
      const timer = setTimeout(() => {
        if (settled) return
        settled = true
        ws.close()
        resolve(1011)
      }, ATTACH_TIMEOUT_MS)
      ws.onopen = () => {
        for (const message of streamOpening({ streamSid: this.streamSid, accountSid: 'ACbench', callSid, token })) ws.send(message)
        this.startedAt = this.openedAt = performance.now()
        this.callers.live.add(this)
      }
      ws.onmessage = (e) => {
        if (!settled) {
          settled = true
          clearTimeout(timer)
          resolve(null)
        }
        this.receive(String(e.data))
      }
      ws.onclose = (e) => {
        this.callers.live.delete(this)
        if (!settled) {
          settled = true
          clearTimeout(timer)
          resolve(e.code)
        }
      }
    })
  }

  receive(raw: string): void {
    const now = performance.now()
    const m = JSON.parse(raw) as { event: string; media?: { payload: string }; mark?: { name: string } }
    if (m.event === 'media') {
      const samples = (m.media!.payload.length * 3) / 4 - (m.media!.payload.endsWith('==') ? 2 : m.media!.payload.endsWith('=') ? 1 : 0)
      this.firstAudioAt ??= now
      if (this.asked && this.asked.answeredAt === null) this.asked.answeredAt = now
      if (this.lastAudioAt !== null) this.waits.push(now - this.lastAudioAt)
      this.lastAudioAt = now
      // A dry spell counts once the mark after this frame shows it is the same turn's audio.
      this.pendingGap = this.dryAt !== null && now - this.dryAt > GAP_MS ? { at: now, ms: now - this.dryAt } : null
      this.dryAt = Math.max(this.dryAt ?? now, now) + (samples * 1000) / RATE_HZ
    } else if (m.event === 'mark') {
      const turn = m.mark!.name.split('.')[0]!
      if (this.pendingGap && turn === this.lastTurn) this.gaps.push(this.pendingGap)
      this.pendingGap = null
      this.lastTurn = turn
      this.marks.push({ name: m.mark!.name, at: this.dryAt ?? now })
      this.echoDue(now)
    } else if (m.event === 'clear') {
      this.dryAt = null
      for (const mark of this.marks.splice(0)) this.echo(mark.name)
    }
  }

  /** Twilio's 20 ms: the caller's frame goes out, marks whose audio has played are echoed. */
  tick(now: number): void {
    const due = Math.floor((now - this.startedAt) / FRAME_MS)
    while (this.chunk < due) {
      this.chunk++
      const payload = this.nextFrame(now)
      this.ws!.send(
        `{"event":"media","sequenceNumber":"${this.chunk + 1}","media":{"track":"inbound","chunk":"${this.chunk}","timestamp":"${this.chunk * FRAME_MS}","payload":"${payload}"},"streamSid":"${this.streamSid}"}`,
      )
    }
    this.echoDue(now)
    if (now - this.startedAt >= this.callers.holdMs) this.hangUp()
  }

  /**
   * The caller's next 20 ms: a silent caller's, or its questions as a person asks them — a question,
   * then silence until the agent has answered (its audio came and has played out) or PATIENCE_MS
   * passed without an answer, then a pause as long as the question, then the next. The first
   * question starts at a random point of the first FIRST_QUESTION_MS, over the opening or after it.
   */
  nextFrame(now: number): string {
    const { questions } = this.callers
    if (!questions.length) return SILENCE_B64
    if (this.chunk <= 1) this.nextAt = now + Math.random() * FIRST_QUESTION_MS
    if (this.script.length) {
      this.spokenFrames++
      const frame = this.script.shift()!
      if (!this.script.length) {
        this.asked = { endAt: now, answeredAt: null, askedFrames: this.lastQuestionFrames }
        this.questions.push(this.asked)
      }
      return frame
    }
    if (this.asked) {
      const a = this.asked
      const heard = a.answeredAt !== null && (this.dryAt === null || now > this.dryAt + ANSWER_OVER_MS)
      if (heard || now - a.endAt > PATIENCE_MS) {
        this.asked = null
        this.nextAt = now + a.askedFrames * FRAME_MS
      }
      return SILENCE_B64
    }
    if (now < this.nextAt) return SILENCE_B64
    const q = questions[Math.floor(Math.random() * questions.length)]!
    this.script = q.slice(1)
    this.lastQuestionFrames = q.length
    this.spokenFrames++
    return q[0]!
  }
  private lastQuestionFrames = 0
  /** Frames of speech sent (of `chunk` in all). */
  spokenFrames = 0
  hungUpAt = 0

  echoDue(now: number): void {
    while (this.marks.length && this.marks[0]!.at <= now) this.echo(this.marks.shift()!.name)
  }

  echo(name: string): void {
    this.ws?.send(JSON.stringify({ event: 'mark', sequenceNumber: String(this.chunk + 1), streamSid: this.streamSid, mark: { name } }))
  }

  hangUp(): void {
    if (this.done) return
    this.done = true
    this.hungUpAt = performance.now()
    this.callers.live.delete(this)
    this.ws?.send(JSON.stringify({ event: 'stop', sequenceNumber: String(this.chunk + 2), streamSid: this.streamSid, stop: { accountSid: 'ACbench', callSid: 'bench' } }))
    this.ws?.close(1000)
    this.callers.hungUp.push(this)
  }
}
