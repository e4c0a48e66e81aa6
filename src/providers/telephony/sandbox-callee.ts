/**
 * The sandbox network's person on the line: a real Twilio Media Streams client of our media
 * bridge (the `ws` package), doing what Twilio and a caller do together. It sends `connected` and
 * `start`, then 20 ms of mu-law every 20 ms (silence, or a line being spoken), plays the agent's
 * audio in real time, echoes each `mark` once the audio before it has played, and on `clear`
 * drops what it buffered and echoes the pending marks at once (as Twilio does).
 *
 * Its script (`lines`) is spoken in turns: a line waits until the agent has spoken and then
 * paused. Two prefixes script the awkward moments (docs/api/voice.md, "The sandbox callee"):
 * - `>` the line is said over the agent ~600 ms into its speech (a barge-in);
 * - `~` a burst of voice-like noise with no words, over the agent (a false interruption).
 * A line `[keypad] 1234#` presses those keys instead of speaking (in-band tones, keypad.ts), in turn.
 * A turn line may start `[wait 3000]`: the agent's pause it waits for (ms; default CALLEE_WAITS_MS);
 * a `>` or `~` line `[after 1500]`: how far into the agent's speech it starts (ms; default
 * CALLEE_INTERRUPTS_AFTER_MS), e.g. `> [after 1500] Sorry, one more thing`.
 * A line `[menu 1] Press 1 for appointments, 2 for billing.` is a phone menu: said in turn, it
 * then hears the agent's keys (tones in its audio) and goes on only once they are `1`; other keys
 * get "Sorry, that is not an option." and the menu again.
 *
 * As an answering machine (`machine`) it plays its greeting at once, whoever speaks, then a beep,
 * tells the network the beep has ended (the network's answering-machine verdict), and records.
 */
import WebSocket from 'ws'
import { randomId } from '../../ids'
import { decodeMulaw, encodeMulaw, PHONE_RATE } from '../../media/codecs'
import { KeypadListener } from '../../media/keypad'
import type { SandboxScripts } from '../stt/sandbox'
import type { TextToSpeech } from '../tts/port'
import { type CalleeLine, prepareLine } from './callee-lines'

const FRAME_MS = 20
const FRAME = (PHONE_RATE * FRAME_MS) / 1000
/** The agent's pause that gives the callee the turn: longer than a breath inside a reply. */
export const CALLEE_WAITS_MS = 900
/** How far into the agent's speech a `>` line cuts in. */
export const CALLEE_INTERRUPTS_AFTER_MS = 600
/**
 * How far past the agent's judged audio the callee may run when the call runs on its audio: ten
 * frames, well inside the second of agent audio the playout keeps buffered here (LEAD_MS), so the
 * agent's answer never runs dry at the callee for want of its caller's frames.
 */
const AHEAD_MS = 200
/** A call slowed to its agent's pace ends at its bound of audio, or at this many times that in real time (a host several times too slow). */
const SLOWED_BOUND = 4
/**
 * The longest the callee waits, in real time, for the agent's side to make its answer before its
 * audio goes on anyway: a local model and the sandbox voice take well under a second even on a
 * loaded host; past this something is stuck, and the call's own waits must run to end it.
 */
const MAX_HOLD_MS = 15_000
const SILENCE = 0xff
/** An answering machine's beep: 1 kHz for 500 ms, as common mailboxes sound it. */
const BEEP_HZ = 1_000
const BEEP_MS = 500

export interface CalleeOptions {
  url: string
  callSid: string
  lines: string[]
  callId: string
  scripts: SandboxScripts
  tts: TextToSpeech
  voice?: string
  /**
   * When the call runs on the caller's audio: how far the agent's side has judged this call's
   * stream (ms), and whether it is making what comes next; null when it does not (or not yet).
   * The callee then sends no more than AHEAD_MS past what was judged, and nothing while the agent
   * makes its answer (up to MAX_HOLD_MS of real time): a host that falls behind slows the call
   * down rather than changing what is heard, and one with time to spare runs it faster than real time.
   */
  pace?: () => { judged: number; hold: boolean } | null
  /** The stream closed, not by the callee hanging up: the close code (1006 when the server vanished). */
  onClosed?: (code: number) => void
  /**
   * A caller whose lines are written as the call goes (a persona a model plays): once `lines` are
   * said and the agent has answered the last, the callee asks for its next line and says it; null
   * (or a failure) is its last word, after which it has had its say.
   */
  more?: () => Promise<string | null>
  /** An answering machine: `greeting` plays at once, then the beep; `beeped` runs when the beep has played. */
  machine?: { greeting: string; beeped: () => void }
}

export class SandboxCallee {
  private ws: WebSocket | null = null
  private readonly streamSid = `MZ${randomId(32)}`
  private lines: CalleeLine[] = []
  private speaking: Int16Array | null = null
  private speakingLine: CalleeLine | null = null
  private spokenAt = 0
  private timer: ReturnType<typeof setInterval> | null = null
  private chunk = 0
  private started = 0
  /** Agent audio waiting to play (samples) and marks in order, each after so many samples. */
  private buffered = 0
  private marks: { name: string; after: number }[] = []
  /** When the agent's audio began playing here, and last played: places in the callee's own stream (ms), as its waits count. */
  private agentSince = 0
  private agentLastAt = 0
  private agentSpokeSinceMyTurn = false
  private closed = false
  /** When the callee answered (performance.now()): its hang-up bound counts real audio time from here. */
  private readonly answeredAt = performance.now()
  /** Script lines not said yet (`lines` is filled only once their audio is ready). */
  private left: number
  private waitingToHangUp: ReturnType<typeof setInterval> | null = null
  /** Since when (performance.now()) the agent's side has asked the callee to wait (`pace`). */
  private holdingSince: number | null = null
  /** The phone menu waiting for keys, the keys it has heard so far, and the ear for them (the agent's tones). */
  private menu: { expects: string; retry: CalleeLine; heard: string } | null = null
  private readonly agentKeys = new KeypadListener()
  /** A `more` caller: asking for its next line now, and done asking (it said its last). */
  private asking = false
  private moreDone = false
  /** What happened, for tests: marks echoed, clears received, lines said. */
  readonly log: {
    /** Keys heard from the agent (its tones), in order. */
    keysHeard: string[]
    clears: number
    marksEchoed: number
    said: string[]
    agentAudioMs: number
    /** Each `>`/`~` line: agent audio that still played after it began, and when the `clear` came. */
    interruptions: { kind: 'interrupt' | 'noise'; playedAfterMs: number; clearedAfterMs: number | null; at: number }[]
    /**
     * Each line's turn as the caller lives it (performance.now()): when its last word left, when the
     * agent's first audio after it arrived, and when that audio started to play here.
     */
    turns: { line: string; speechEndedAt: number; agentAudioAt: number | null }[]
  } = { keysHeard: [], clears: 0, marksEchoed: 0, said: [], agentAudioMs: 0, interruptions: [], turns: [] }

  constructor(private readonly options: CalleeOptions) {
    this.left = options.lines.length
  }

  /**
   * Whether the callee has had its say: every line said, and the agent has answered the last one
   * (spoken, then paused as long as the callee waits before a turn). A callee with no lines has.
   */
  scriptDone(): boolean {
    const more = this.options.more !== undefined && !this.moreDone
    if (this.options.lines.length === 0 && !this.options.more) return true
    if (this.left > 0 || this.speaking || more) return false
    return this.agentSpokeSinceMyTurn && this.buffered === 0 && this.streamMs() - this.agentLastAt >= CALLEE_WAITS_MS
  }

  /** A `more` caller's next line, asked once the agent has answered the last (decide). */
  private askMore(): void {
    const more = this.options.more!
    this.asking = true
    more()
      .then(async (text) => {
        if (text === null || this.closed) this.moreDone = true
        else {
          this.lines.push(await this.prepareLine(text))
          this.left++
        }
      })
      .catch(() => {
        this.moreDone = true
      })
      .finally(() => {
        this.asking = false
      })
  }

  /**
   * Past the hang-up bound: `afterMs` of real time since the answer; of the call's own audio when
   * it runs on it (`pace`: a host that falls behind slows such a call down), with a real-time
   * bound SLOWED_BOUND times as long so a call whose agent side stopped judging still ends.
   */
  private pastBound(now: number, afterMs: number): boolean {
    return this.paced() ? this.streamMs() >= afterMs || now - this.answeredAt >= afterMs * SLOWED_BOUND : now - this.answeredAt >= afterMs
  }

  /**
   * The call runs on its caller's audio (`pace`): then the STT double follows this line by its
   * place in the stream. On any other call it keeps following the host's time, which real-time
   * turn-taking was tuned against: there the words a pause is judged by run a little ahead of the
   * audio the VAD has judged, as a streaming engine's partials do.
   */
  private paced(): boolean {
    return (this.options.pace?.() ?? null) !== null
  }

  /**
   * Where the callee is in its own stream (ms): the audio it has sent. Its waits for the agent
   * count in this, not the host's time, so a burst after a stall does not make a pause of the
   * agent's that the line never had.
   */
  private streamMs(): number {
    return this.chunk * FRAME_MS
  }

  /**
   * The network's hang-up fell due while the script is still running: `hangUp` runs once the
   * script is done, or once `afterMs` of real time has passed since the answer, whichever is first
   * (never when the call ended otherwise meanwhile: the socket is closed then).
   */
  hangUpWhenDone(afterMs: number, hangUp: () => void): void {
    if (this.waitingToHangUp) return
    const check = () => {
      const now = performance.now()
      const gone = this.closed || (this.ws !== null && this.ws.readyState >= WebSocket.CLOSING)
      if (!gone && !this.scriptDone() && !this.pastBound(now, afterMs)) return
      if (this.waitingToHangUp) clearInterval(this.waitingToHangUp)
      this.waitingToHangUp = null
      if (!this.closed) hangUp()
    }
    this.waitingToHangUp = setInterval(check, FRAME_MS)
    check()
  }

  async connect(): Promise<void> {
    this.lines = await Promise.all(this.options.lines.map((l) => this.prepareLine(l)))
    const machine = this.options.machine
    if (machine) {
      const greeting = await this.prepareLine(machine.greeting)
      const beep = tone(BEEP_HZ, BEEP_MS)
      const audio = new Int16Array(greeting.speechEnd + beep.length)
      audio.set(greeting.audio.subarray(0, greeting.speechEnd))
      audio.set(beep, greeting.speechEnd)
      this.lines.unshift({ text: greeting.text, kind: 'machine', audio, speechEnd: audio.length })
      this.left++
    }
    const ws = new WebSocket(this.options.url)
    this.ws = ws
    ws.on('message', (data) => this.receive(String(data)))
    ws.on('close', (code) => {
      this.stopTimer()
      if (!this.closed) this.options.onClosed?.(code)
    })
    ws.on('error', () => this.stopTimer())
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
        callSid: this.options.callSid,
        tracks: ['inbound'],
        customParameters: {},
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: PHONE_RATE, channels: 1 },
      },
      streamSid: this.streamSid,
    })
    this.started = performance.now()
    // Drift-free 20 ms pacing: each tick sends the frames that are due by now.
    this.timer = setInterval(() => this.tick(), FRAME_MS)
  }

  /** The callee hangs up: `stop`, then the socket closes. */
  private prepareLine(raw: string): Promise<CalleeLine> {
    return prepareLine(raw, this.options.tts, this.options.voice)
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.stopTimer()
    if (this.waitingToHangUp) clearInterval(this.waitingToHangUp)
    this.waitingToHangUp = null
    this.send({ event: 'stop', sequenceNumber: String(this.chunk + 2), streamSid: this.streamSid, stop: { accountSid: 'ACsandbox', callSid: this.options.callSid } })
    this.ws?.close(1000)
  }

  private tick(): void {
    // A call that runs on its audio goes at the agent's pace, as fast as the host judges it; any other in real time.
    const pace = this.options.pace?.() ?? null
    let due = Math.floor((performance.now() - this.started) / FRAME_MS)
    if (pace) {
      const now = performance.now()
      if (!pace.hold) this.holdingSince = null
      else this.holdingSince ??= now
      const held = this.holdingSince !== null && now - this.holdingSince < MAX_HOLD_MS
      due = held ? this.chunk : Math.floor((pace.judged + AHEAD_MS) / FRAME_MS)
    }
    while (this.chunk < due && !this.closed) this.frame()
  }

  private frame(): void {
    const now = performance.now()
    this.play()
    this.decide(now)
    let payload: Uint8Array
    if (this.speaking && this.spokenAt < this.speaking.length) {
      payload = encodeMulaw(this.speaking.subarray(this.spokenAt, this.spokenAt + FRAME))
      const end = this.speakingLine?.speechEnd ?? -1
      if (this.speakingLine?.text && this.spokenAt < end && this.spokenAt + FRAME >= end) {
        this.log.turns.push({ line: this.speakingLine.text, speechEndedAt: now + ((end - this.spokenAt) * 1000) / PHONE_RATE, agentAudioAt: null })
      }
      this.spokenAt += FRAME
      if (this.speakingLine?.kind === 'machine' && this.spokenAt >= this.speaking.length) this.options.machine?.beeped()
      if (payload.length < FRAME) payload = pad(payload)
    } else {
      this.speaking = null
      payload = new Uint8Array(FRAME).fill(SILENCE)
    }
    this.chunk++
    this.send({
      event: 'media',
      sequenceNumber: String(this.chunk + 1),
      media: { track: 'inbound', chunk: String(this.chunk), timestamp: String(this.chunk * FRAME_MS), payload: Buffer.from(payload).toString('base64') },
      streamSid: this.streamSid,
    })
  }

  /** 20 ms of the agent's audio plays; marks whose audio has all played are echoed. */
  private play(): void {
    const played = Math.min(this.buffered, FRAME)
    this.buffered -= played
    for (const m of this.marks) m.after = Math.max(0, m.after - played)
    while (this.marks.length && this.marks[0]!.after === 0) this.echo(this.marks.shift()!.name)
    if (played > 0) this.agentLastAt = this.streamMs()
    const open = this.log.interruptions.at(-1)
    if (open && open.clearedAfterMs === null) open.playedAfterMs += (played * 1000) / PHONE_RATE
  }

  /** Whether to start the next line now (`now`: the host's time, for the log). */
  private decide(now: number): void {
    const at = this.streamMs()
    if (this.speaking || this.menu) return
    const next = this.lines[0]
    const agentPlaying = this.buffered > 0
    if (!next) {
      const answered = this.agentSpokeSinceMyTurn && !agentPlaying && at - this.agentLastAt >= CALLEE_WAITS_MS
      if (this.options.more && !this.moreDone && !this.asking && answered) this.askMore()
      return
    }
    if (next.kind === 'machine') {
      // A machine's greeting plays as soon as it answers, whoever speaks.
    } else if (next.kind === 'turn') {
      if (!this.agentSpokeSinceMyTurn || agentPlaying || at - this.agentLastAt < (next.waitMs ?? CALLEE_WAITS_MS)) return
    } else if (!agentPlaying || at - this.agentSince < (next.afterMs ?? CALLEE_INTERRUPTS_AFTER_MS)) return
    this.lines.shift()
    this.left--
    // A menu hears keys from when it starts speaking: people press before the prompt ends.
    if (next.menu) this.menu = { ...next.menu, heard: '' }
    this.speaking = next.audio
    this.speakingLine = next
    this.spokenAt = 0
    if (next.text) {
      if (!next.keys && next.kind !== 'machine') this.options.scripts.said(this.options.callId, next.text, (next.audio.length / PHONE_RATE) * 1000, this.paced() ? this.chunk * FRAME_MS : undefined)
      this.log.said.push(next.text)
    }
    if (next.kind === 'interrupt' || next.kind === 'noise') this.log.interruptions.push({ kind: next.kind, playedAfterMs: 0, clearedAfterMs: null, at: now })
    if (next.kind !== 'noise') this.agentSpokeSinceMyTurn = false
  }

  private receive(raw: string): void {
    let m: { event?: string; media?: { payload?: string }; mark?: { name?: string } }
    try {
      m = JSON.parse(raw)
    } catch {
      return
    }
    if (m.event === 'media' && m.media?.payload) {
      const bytes = Buffer.from(m.media.payload, 'base64')
      for (const key of this.agentKeys.push(decodeMulaw(bytes), PHONE_RATE)) this.keyPressed(key)
      const samples = bytes.length
      if (this.buffered === 0) this.agentSince = this.streamMs()
      const turn = this.log.turns.at(-1)
      if (turn && turn.agentAudioAt === null) turn.agentAudioAt = performance.now()
      this.buffered += samples
      this.log.agentAudioMs += (samples * 1000) / PHONE_RATE
      this.agentSpokeSinceMyTurn = true
    } else if (m.event === 'mark' && m.mark?.name) {
      this.marks.push({ name: m.mark.name, after: this.buffered })
      if (this.buffered === 0) this.echo(this.marks.pop()!.name)
    } else if (m.event === 'clear') {
      this.log.clears++
      // The agent's turn was cut: the callee's next line waits for the agent's next turn.
      this.agentSpokeSinceMyTurn = false
      const open = this.log.interruptions.at(-1)
      if (open && open.clearedAfterMs === null) open.clearedAfterMs = performance.now() - open.at
      this.buffered = 0
      for (const mark of this.marks.splice(0)) this.echo(mark.name)
    }
  }

  /** A key the agent pressed: a waiting menu goes on when its keys are all in and right, else says so and asks again. */
  private keyPressed(key: string): void {
    this.log.keysHeard.push(key)
    const menu = this.menu
    if (!menu) return
    menu.heard += key
    if (menu.heard.length < menu.expects.length) return
    this.menu = null
    if (menu.heard === menu.expects) return
    this.lines.unshift(menu.retry)
    this.left++
  }

  private echo(name: string): void {
    this.log.marksEchoed++
    this.send({ event: 'mark', sequenceNumber: String(this.chunk + 1), streamSid: this.streamSid, mark: { name } })
  }

  private send(message: object): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message))
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}

/** A pure tone at half scale. */
function tone(hz: number, ms: number): Int16Array {
  const out = new Int16Array((PHONE_RATE * ms) / 1000)
  for (let i = 0; i < out.length; i++) out[i] = Math.round(16_000 * Math.sin((2 * Math.PI * hz * i) / PHONE_RATE))
  return out
}

function pad(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME).fill(SILENCE)
  out.set(bytes)
  return out
}
