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
 * A line's words may follow `[clip 2]`: it plays the recorded audio `clips[2]` instead of speaking
 * them (a replayed call's caller), the words being what the sandbox speech-to-text hears in it.
 * A line `[menu 1] Press 1 for appointments, 2 for billing.` is a phone menu: said in turn, it
 * then hears the agent's keys (tones in its audio) and goes on only once they are `1`; other keys
 * get "Sorry, that is not an option." and the menu again.
 *
 * As an answering machine (`machine`) it plays its greeting at once, whoever speaks, then a beep,
 * tells the network the beep has ended (the network's answering-machine verdict), and records.
 */

import type { TextToSpeech } from '../../voice/public'
import { decodeMulaw, encodeMulaw, KeypadListener, PHONE_RATE } from '../../voice/public'
import type { SandboxScripts } from '../stt/sandbox'
import { type CalleeLine, machineLine, prepareLine } from './callee-lines'
import { CalleePace, type Pace } from './callee-pace'
import { AgentPlayback } from './callee-playback'
import { CalleeStream, FRAME, FRAME_MS } from './callee-stream'

/** The agent's pause that gives the callee the turn: longer than a breath inside a reply. */
export const CALLEE_WAITS_MS = 900
/** How far into the agent's speech a `>` line cuts in. */
export const CALLEE_INTERRUPTS_AFTER_MS = 600

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
   * The callee then keeps to the agent's pace (callee-pace.ts).
   */
  pace?: Pace
  /** The stream closed, not by the callee hanging up: the close code (1006 when the server vanished). */
  onClosed?: (code: number) => void
  /**
   * A caller whose lines are written as the call goes (a persona a model plays): once `lines` are
   * said and the agent has answered the last, the callee asks for its next line and says it; null
   * (or a failure) is its last word, after which it has had its say.
   */
  more?: () => Promise<string | null>
  /** Recorded audio (8 kHz) that `[clip N]` lines play. */
  clips?: Int16Array[]
  /** An answering machine: `greeting` plays at once, then the beep; `beeped` runs when the beep has played. */
  machine?: { greeting: string; beeped: () => void }
}

export class SandboxCallee {
  private readonly stream: CalleeStream
  private readonly pace: CalleePace
  private lines: CalleeLine[] = []
  private speaking: Int16Array | null = null
  private speakingLine: CalleeLine | null = null
  private spokenAt = 0
  private timer: ReturnType<typeof setInterval> | null = null
  private chunk = 0
  private started = 0
  private readonly agent = new AgentPlayback()
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
    this.stream = new CalleeStream(options.url, options.callSid)
    this.pace = new CalleePace(options.pace)
  }

  /**
   * Whether the callee has had its say: every line said, and the agent has answered the last one
   * (spoken, then paused as long as the callee waits before a turn). A callee with no lines has.
   */
  scriptDone(): boolean {
    const more = this.options.more !== undefined && !this.moreDone
    if (this.options.lines.length === 0 && !this.options.more) return true
    if (this.left > 0 || this.speaking || more) return false
    return this.agentSpokeSinceMyTurn && this.agent.buffered === 0 && this.streamMs() - this.agentLastAt >= CALLEE_WAITS_MS
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
      const gone = this.closed || this.stream.gone
      if (!gone && !this.scriptDone() && !this.pace.pastBound(performance.now() - this.answeredAt, this.streamMs(), afterMs)) return
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
      this.lines.unshift(await machineLine(machine.greeting, this.options.tts, this.options.voice))
      this.left++
    }
    await this.stream.open({
      message: (raw) => this.receive(raw),
      closed: (code) => {
        this.stopTimer()
        if (!this.closed) this.options.onClosed?.(code)
      },
      error: () => this.stopTimer(),
    })
    this.started = performance.now()
    // Drift-free 20 ms pacing: each tick sends the frames that are due by now.
    this.timer = setInterval(() => this.tick(), FRAME_MS)
  }

  private prepareLine(raw: string): Promise<CalleeLine> {
    return prepareLine(raw, this.options.tts, this.options.voice, this.options.clips)
  }

  /** The callee hangs up: `stop`, then the socket closes. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.stopTimer()
    if (this.waitingToHangUp) clearInterval(this.waitingToHangUp)
    this.waitingToHangUp = null
    this.stream.stop(this.chunk)
  }

  private tick(): void {
    // A call that runs on its audio goes at the agent's pace, as fast as the host judges it; any other in real time.
    const due = this.pace.due(performance.now(), this.started, this.chunk)
    while (this.chunk < due && !this.closed) this.frame()
  }

  private frame(): void {
    const now = performance.now()
    this.play()
    this.decide(now)
    let payload: Uint8Array | null = null
    if (this.speaking && this.spokenAt < this.speaking.length) {
      payload = encodeMulaw(this.speaking.subarray(this.spokenAt, this.spokenAt + FRAME))
      const end = this.speakingLine?.speechEnd ?? -1
      if (this.speakingLine?.text && this.spokenAt < end && this.spokenAt + FRAME >= end) {
        this.log.turns.push({ line: this.speakingLine.text, speechEndedAt: now + ((end - this.spokenAt) * 1000) / PHONE_RATE, agentAudioAt: null })
      }
      this.spokenAt += FRAME
      if (this.speakingLine?.kind === 'machine' && this.spokenAt >= this.speaking.length) this.options.machine?.beeped()
    } else this.speaking = null
    this.chunk++
    // Silence (null) while the callee says nothing.
    this.stream.media(this.chunk, payload)
  }

  /** 20 ms of the agent's audio plays; marks whose audio has all played are echoed. */
  private play(): void {
    const { played, due } = this.agent.play(FRAME)
    for (const name of due) this.echo(name)
    if (played > 0) this.agentLastAt = this.streamMs()
    const open = this.log.interruptions.at(-1)
    if (open && open.clearedAfterMs === null) open.playedAfterMs += (played * 1000) / PHONE_RATE
  }

  /** Whether to start the next line now (`now`: the host's time, for the log). */
  private decide(now: number): void {
    const at = this.streamMs()
    if (this.speaking || this.menu) return
    const next = this.lines[0]
    const agentPlaying = this.agent.buffered > 0
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
      if (!next.keys && next.kind !== 'machine')
        // Its words spread over its speech, not the silence TTS pads it with: a live engine has
        // the last word once it has been said.
        this.options.scripts.said(this.options.callId, next.text, (next.speechEnd / PHONE_RATE) * 1000, this.pace.paced() ? this.chunk * FRAME_MS : undefined)
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
      if (this.agent.buffered === 0) this.agentSince = this.streamMs()
      const turn = this.log.turns.at(-1)
      if (turn && turn.agentAudioAt === null) turn.agentAudioAt = performance.now()
      this.agent.add(samples)
      this.log.agentAudioMs += (samples * 1000) / PHONE_RATE
      this.agentSpokeSinceMyTurn = true
    } else if (m.event === 'mark' && m.mark?.name) {
      for (const name of this.agent.mark(m.mark.name)) this.echo(name)
    } else if (m.event === 'clear') {
      this.log.clears++
      // The agent's turn was cut: the callee's next line waits for the agent's next turn.
      this.agentSpokeSinceMyTurn = false
      const open = this.log.interruptions.at(-1)
      if (open && open.clearedAfterMs === null) open.clearedAfterMs = performance.now() - open.at
      for (const name of this.agent.clear()) this.echo(name)
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
    this.stream.mark(this.chunk, name)
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
