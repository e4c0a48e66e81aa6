/**
 * One call's voice pipeline, transport-agnostic: inbound frames in (`frame`), outbound frames out
 * (`send`), the call feature behind `CallLine`. The stages, in order (PIPELINE below names them):
 * decode (the serializer) → VAD → turn-taking (the chart) → STT → the agent (the conversation
 * engine, streaming) → clauses → TTS → resample → paced send with marks (playout.ts).
 *
 * Turn-taking is the chart machines/voice-turn.ts, run here: the VAD says when the caller speaks
 * and pauses, the speech-to-text engine what they said so far, and the chart waits as long as the
 * end-of-turn rules say for those words (end-of-turn.ts) before the turn is over. The moment the
 * caller pauses on a stable transcript the reply starts (preemptive generation, reply-turn.ts):
 * held, unheard and unwritten, it is released when the turn ends on the same words, and
 * cancelled if the caller goes on or the final transcript differs. The agent stops the moment the
 * caller really interrupts, ignores backchannels, and resumes its sentence after a false interruption.
 *
 * Audio-rate work never touches the call actor: the session tells the call feature only what a
 * call record needs (transcript lines, per-turn latency, the end).
 */
import { type Actor, createActor } from 'xstate'
import { voiceTurnMachine } from '../../machines/voice-turn'
import { AgentVoice } from './agent-voice'
import type { PipelineState, SessionParts } from './call-line'
import { CallerWords } from './caller-words'
import { PHONE_RATE, resample } from './codecs'
import { endOfTurn, TRAILING_WAIT_MS } from './end-of-turn'
import type { InboundFrame } from './frames'
import { KeypadListener, keypadLine, keypadPrompt } from './keypad'
import { isBackchannel, VOICE_LINES } from './phrases'
import { CHUNK_MS, Playout } from './playout'
import { type ReplyTurn, sameWords } from './reply-turn'
import { TurnDetector } from './turns'

export type { AgentReply } from './reply-turn'

/** A call's pipeline, stage by stage, as it runs (the console's actor view lists it). */
export const PIPELINE = ['decode', 'vad', 'turn-taking', 'stt', 'agent', 'clauses', 'tts', 'resample', 'playout'] as const

/** Caller silence (nobody speaking) that ends the call politely: Vapi's and Retell's default is 30 s. */
export const SILENCE_TIMEOUT_MS = 30_000
/** Keypad digits are collected until `#` or this long without one (a person typing a PIN pauses < 1 s). */
export const DTMF_GAP_MS = 1_500
/**
 * Silence that ends speech said over the agent (a backchannel, to be let go): the pauses inside
 * one speaker's turn run 500–700 ms, so a shorter gap between two words is not its end.
 */
export const OVERLAP_END_MS = 500
/** How long a decision on the audio waits for a VAD that has fallen behind before deciding on what it has: 2 s, as MAX_INBOUND_PENDING. */
const VAD_CATCH_UP_MS = 2_000
/** How often such a decision looks again: a line frame. */
const VAD_RECHECK_MS = 20
/** Inbound frames waiting for the VAD: 2 s of 20 ms frames. Frames arriving past it are dropped (counted). */
export const MAX_INBOUND_PENDING = 100

export type { CallLine, PipelineState, SessionParts } from './call-line'

export class VoiceSession {
  private readonly playout: Playout
  /** The agent's replies and fixed lines, as audio (agent-voice.ts). */
  private readonly voice: AgentVoice
  private readonly detector = new TurnDetector()
  private readonly now: () => number
  readonly chart: Actor<typeof voiceTurnMachine>
  /** The reply being heard (or about to be), and one started early on the caller's words, held. */
  private turn: ReplyTurn | null = null
  private early: ReplyTurn | null = null
  /** Audio from the line not yet judged by the VAD, and whether it is being judged now. */
  private readonly backlog: { pcm: Int16Array; rate: number; arrivedAt: number; keyTone?: boolean }[] = []
  private analysing = false
  dropped = 0
  private resumeText: string | null = null
  /** What the caller has said this turn. */
  private readonly words: CallerWords
  private digits = ''
  private digitTimer: ReturnType<typeof setTimeout> | null = null
  /** Keys pressed while the caller was speaking: they join that turn. */
  private keyedInTurn: string | null = null
  /** Keys heard as tones in the caller's audio (the line has no `dtmf` messages of its own). */
  private readonly keypad: KeypadListener | null
  private silenceTimer: ReturnType<typeof setTimeout> | null = null
  private limitTimer: ReturnType<typeof setTimeout> | null = null
  private overlapTimer: ReturnType<typeof setTimeout> | null = null
  /** Arrival time of the last audio the VAD has judged. */
  private analysedUpTo = 0
  private bargedIn = false

  constructor(private readonly parts: SessionParts) {
    this.now = parts.now ?? (() => performance.now())
    this.keypad = parts.line.hearsKeypadTones ? new KeypadListener() : null
    this.playout = new Playout((f) => parts.send(f), {
      rate: PHONE_RATE,
      chunkMs: parts.chunkMs ?? CHUNK_MS,
      now: this.now,
      onFirstSent: (id, at) => {
        if (this.turn?.id !== id) return
        if (this.turn.latency) this.turn.latency.firstAudioSentAt = at
        this.chart.send({ type: 'reply.audio' })
      },
      onFirstHeard: (id, at) => {
        if (this.turn?.id === id && this.turn.latency) this.turn.latency.firstMarkEchoedAt = at
      },
      onHeard: (id, heard) => parts.line.agentHearing?.(heard, id),
      onSent: (f) => {
        if (f.kind === 'audio') parts.record?.fromAgent(f.pcm, f.sampleRate)
      },
    })
    this.voice = new AgentVoice({
      line: parts.line,
      tts: parts.tts,
      playout: this.playout,
      now: this.now,
      phrases: parts.phrases,
      ttsFailed: (err) => {
        this.endReason ??= { hangup: 'failed', error: `text-to-speech failed: ${err.message}` }
        void this.hangUp()
      },
    })
    const chart = voiceTurnMachine.provide({
      actions: {
        // Only a turn that reads as done is worth a reply before the wait is over: one that trails
        // off or says nothing yet would mostly be cancelled.
        preempt: ({ context }) => (context.shape === 'complete' || context.shape === 'number' ? this.preempt(context.text) : this.dropEarly()),
        cancelPreempt: () => this.dropEarly(),
        commitTurn: ({ context }) => void this.commit(context.pausedAt, context.interrupted),
        stopAgent: () => this.stopAgent(),
      },
    })
    const a = parts.actor ?? {}
    this.chart = createActor(chart, { ...(a.systemId ? { systemId: a.systemId } : {}), ...(a.inspect ? { inspect: a.inspect } : {}), ...(a.clock ? { clock: a.clock } : {}) })
    this.chart.subscribe((s) => {
      parts.line.state(s.value as PipelineState)
      if (s.value === 'listening') this.armSilence()
    })
    this.chart.start()
    this.words = new CallerWords(
      parts.stt,
      (heard, stable) => this.heard(heard, stable),
      (message, err) => parts.line.log('warn', message, { err: String(err) }),
    )
  }

  get state(): PipelineState {
    return this.chart.getSnapshot().value as PipelineState
  }

  /** The stream started: the agent speaks first; the call's length limit starts. The rate is not kept: each audio frame carries its own. */
  start(_sampleRate: number): void {
    if (this.parts.line.unavailable) return void this.endPolitely(VOICE_LINES.unavailable, 'answered', this.parts.line.unavailable)
    this.limitTimer = setTimeout(() => void this.endPolitely(VOICE_LINES.timeLimit, 'answered'), this.parts.line.maxCallSeconds * 1000)
    void this.say(this.parts.line.opening, { opening: true })
  }

  /** A frame from the line. */
  frame(frame: InboundFrame): void {
    if (this.state === 'ended') return
    if (frame.kind === 'audio') {
      // Bounded: if the VAD falls behind, the newest audio goes (counted), never memory.
      if (this.backlog.length >= MAX_INBOUND_PENDING) {
        this.dropped++
        return
      }
      const keys = this.keypad?.push(frame.pcm, frame.sampleRate) ?? []
      for (const key of keys) this.dtmf(key)
      // Turn timing follows when the audio arrived, not when the VAD (on its own thread) got to it.
      this.backlog.push({ pcm: frame.pcm, rate: frame.sampleRate, arrivedAt: this.now(), keyTone: this.keypad?.toneNow })
      if (!this.analysing) void this.analyse()
    } else if (frame.kind === 'mark') this.playout.echo(frame.name)
    else if (frame.kind === 'dtmf') this.dtmf(frame.digit)
  }

  /** The socket can take more. */
  drained(): void {
    this.playout.drained()
  }

  /**
   * The call is over (either side): timers stop, the heard part of the current turn is final.
   * Resolves once what the caller heard of it is stored (the call's analysis reads it).
   */
  async close(): Promise<void> {
    if (this.state === 'ended') return this.stored
    this.chart.send({ type: 'call.end' })
    for (const t of [this.digitTimer, this.silenceTimer, this.limitTimer, this.overlapTimer]) if (t) clearTimeout(t)
    this.turn?.cancel()
    this.early?.cancel()
    this.playout.close()
    void this.parts.stt.close().catch(() => {})
    this.chart.stop()
    await this.stored
  }

  /** The last turn's storing of what was heard. */
  private stored: Promise<void> = Promise.resolve()

  /**
   * Judges the line's audio in order. Audio that arrived while the VAD was busy goes to it in one
   * piece, so after a stall the session catches up in one round trip to the model instead of
   * staying as far behind as the stall left it.
   */
  private async analyse(): Promise<void> {
    this.analysing = true
    try {
      while (this.backlog.length && this.state !== 'ended') {
        const rate = this.backlog[0]!.rate
        let n = 1
        while (n < this.backlog.length && this.backlog[n]!.rate === rate) n++
        await this.audio(this.backlog.splice(0, n), rate)
      }
    } catch (err) {
      this.backlog.length = 0
      this.parts.line.log('warn', 'voice activity detection failed', { err: String(err) })
    } finally {
      this.analysing = false
    }
  }

  /** Frames of the line's audio at one rate, in order: to the recording, the STT, then the VAD's windows to the turn detector. */
  private async audio(frames: { pcm: Int16Array; arrivedAt: number; keyTone?: boolean }[], rate: number): Promise<void> {
    const stt = this.parts.stt
    for (const f of frames) {
      this.parts.record?.fromCaller(f.pcm, rate)
      // A key's tone is no speech: the VAD and the speech-to-text hear silence in its place.
      if (f.keyTone) f.pcm = new Int16Array(f.pcm.length)
      stt.push(resample(f.pcm, rate, stt.sampleRate))
    }
    const pcm = frames.length === 1 ? frames[0]!.pcm : joined(frames.map((f) => f.pcm))
    const windows = await this.parts.vad.push(pcm, rate)
    if (this.state === 'ended') return
    this.analysedUpTo = frames.at(-1)!.arrivedAt
    // Each window's time is when the frame that completed it arrived.
    let frame = 0
    let upTo = frames[0]!.pcm.length
    for (const w of windows) {
      while (w.end > upTo && frame < frames.length - 1) upTo += frames[++frame]!.pcm.length
      const at = frames[frame]!.arrivedAt
      if (w.speech) this.words.spoke()
      const event = this.detector.window(w.speech, w.ms, at)
      const agentTalking = this.state === 'speaking' || this.state === 'thinking' || this.state === 'opening'
      if (event?.type === 'speech_start') {
        this.quiet()
        this.bargedIn = false
        this.chart.send({ type: 'speech.start' })
      }
      // Speech over the agent (the detector's MIN_SPEECH_MS of it: not a click): the agent stops at
      // once, so the caller is not talked over while they speak. Whether it was meant is judged on
      // its words when it pauses (commit): a backchannel or a noise makes the agent say the rest
      // of its sentence, anything else is the caller's turn.
      if (agentTalking && this.detector.inTurnNow && !this.bargedIn && !this.parts.line.unavailable) {
        this.bargedIn = true
        this.chart.send({ type: 'bargeIn' })
        // Already paused (its pause was taken for an "uh-huh"): the interruption's turn is judged now.
        if (!this.detector.speaking) this.paused(this.detector.lastSpeech, false)
      }
      if (event?.type === 'pause') this.paused(event.at, agentTalking)
    }
  }

  /** The caller's speech paused: the chart judges the turn; speech the agent talked over is let go. */
  private paused(lastSpeechAt: number, agentTalking: boolean): void {
    // Speech over the agent that never became a barge-in (an "uh-huh") takes no turn: once it has
    // really ended, its words are let go so they do not open the caller's next turn.
    if ((agentTalking && !this.bargedIn) || this.parts.line.unavailable) {
      if (this.overlapTimer) clearTimeout(this.overlapTimer)
      const until = lastSpeechAt + OVERLAP_END_MS
      const settle = () => {
        // Judged on the audio, not the wall clock: while the VAD (on its own thread) has not yet
        // seen the audio up to the end of the gap, the caller may have gone on in it.
        if (this.analysedUpTo < until && this.now() < until + VAD_CATCH_UP_MS) {
          this.overlapTimer = setTimeout(settle, VAD_RECHECK_MS)
          return
        }
        this.overlapTimer = null
        if (this.detector.speaking || this.bargedIn) return
        this.detector.end()
        this.words.dropped()
      }
      this.overlapTimer = setTimeout(settle, Math.max(0, until - this.now()))
      return
    }
    this.words.paused()
    const heard = this.words.heard
    const judged = endOfTurn(heard, this.parts.line.endpointingMaxMs ?? TRAILING_WAIT_MS)
    const left = Math.max(0, judged.waitMs - (this.now() - lastSpeechAt))
    this.chart.send({ type: 'speech.pause', at: lastSpeechAt, text: heard, waitMs: left, why: judged.why, shape: judged.shape })
  }

  /** What the caller said so far changed: an early reply on other words is cancelled; a pause is judged again. */
  private heard(text: string, stable: boolean): void {
    if (this.early && !sameWords(this.early.text, text)) this.dropEarly()
    const snapshot = this.chart.getSnapshot()
    // While the caller still speaks, only words the engine will not revise may start a reply early.
    if (snapshot.value !== 'maybeDone' && !(snapshot.value === 'callerSpeaking' && stable)) return
    const judged = endOfTurn(text, this.parts.line.endpointingMaxMs ?? TRAILING_WAIT_MS)
    const left = snapshot.value === 'maybeDone' ? Math.max(0, judged.waitMs - (this.now() - snapshot.context.pausedAt)) : judged.waitMs
    this.chart.send({ type: 'transcript', text, waitMs: left, why: judged.why, shape: judged.shape })
  }

  /** Customer speech over the agent, long enough to be meant: stop talking now. */
  private stopAgent(): void {
    const cleared = this.playout.clear()
    this.turn?.cancel()
    this.resumeText = cleared?.unheardOfSentence || null
    this.parts.line.log('info', 'barge-in: playback cleared', { turn: cleared?.turn, heard: cleared?.heard.length })
  }

  /** The caller paused on words: the reply starts now, held until the turn is over. */
  private preempt(text: string): void {
    if (!text.trim() || (this.early && sameWords(this.early.text, text))) return
    this.dropEarly()
    this.early = this.voice.reply(text, true)
  }

  private dropEarly(): void {
    this.early?.cancel()
    this.early = null
  }

  /** The chart ended the caller's turn: the final transcript is answered (by the early reply when it matches). */
  private async commit(speechEndAt: number, interrupted: boolean): Promise<void> {
    const endpointedAt = this.now()
    this.detector.end()
    let text: string
    try {
      text = await this.words.final()
    } catch (err) {
      this.parts.line.log('warn', 'speech-to-text failed', { err: String(err) })
      return void this.endPolitely(VOICE_LINES.trouble, 'failed', `speech-to-text failed: ${(err as Error).message}`)
    }
    const sttFinalAt = this.now()
    if (this.state === 'ended') return
    const keyed = this.keyedInTurn
    this.keyedInTurn = null
    if (keyed) return void this.answerKeys(keyed, text, { speechEndAt, endpointedAt, sttFinalAt })
    // Noise, or an "okay" long enough to have stopped the agent: it picks its sentence up again
    // instead of falling silent or answering an acknowledgement.
    if (!text || (interrupted && isBackchannel(text))) {
      this.dropEarly()
      this.chart.send({ type: 'reply.none' })
      const rest = interrupted ? this.resumeText : null
      this.resumeText = null
      if (rest) void this.say(rest, { resumed: true })
      return
    }
    this.resumeText = null
    const marks = { speechEndAt, endpointedAt, sttFinalAt, ...(this.parts.stt.queuedMs === undefined ? {} : { sttQueueMs: this.parts.stt.queuedMs }) }
    await this.parts.line.customerSaid(text)
    const early = this.early && sameWords(this.early.text, text) ? this.early : null
    if (!early) this.dropEarly()
    this.early = null
    const turn = early ?? this.voice.reply(text, false)
    turn.latency = { turn: turn.id, ...marks, llmFirstTokenAt: turn.firstTokenAt, ttsFirstByteAt: turn.ttsFirstByteAt, firstAudioSentAt: null, firstMarkEchoedAt: null }
    this.hear(turn, true)
    turn.release()
  }

  /** Speaks fixed text (the opening, a resumed sentence, a goodbye). */
  private say(text: string, options: { opening?: boolean; resumed?: boolean; endAfter?: boolean } = {}): void {
    const turn = this.voice.turn('', false)
    turn.endAfter = options.endAfter ?? false
    this.hear(turn, false, options.opening)
    this.voice.speakText(turn, text)
  }

  /** `turn` is the one the caller hears now: the previous one stops; its audio goes to the line as it comes. */
  private hear(turn: ReplyTurn, answer: boolean, opening = false): void {
    if (this.turn && this.turn !== turn) this.turn.cancel()
    this.turn = turn
    this.quiet()
    this.playout.begin(turn.id, (heard) => {
      const previous = this.stored
      this.stored = previous.then(() => this.played(turn, heard, answer, opening))
    })
  }

  /** The turn's audio has played (or was cut): memory and transcript keep what was heard. */
  private async played(turn: ReplyTurn, heard: string, answer: boolean, opening: boolean): Promise<void> {
    const { line } = this.parts
    if (heard || turn.reply?.messageId)
      await line.agentSaid(heard, answer ? (turn.reply?.messageId ?? null) : null, opening, turn.id).catch((err) => line.log('warn', 'could not store what the agent said', { err: String(err) }))
    if (turn.latency && turn.latency.firstAudioSentAt !== null) line.latency(turn.latency)
    if (this.turn !== turn || this.state === 'ended') return
    if (turn.endAfter) return void this.hangUp()
    if (turn.reply?.transfer && this.parts.line.transfer) return void this.transfer(turn.reply.transfer)
    if (turn.reply?.endCall) return void this.endPolitely(null, 'answered')
    this.chart.send({ type: 'reply.done' })
  }

  /** The agent puts the caller through: the network then closes the line; a refusal is said and the call goes on. */
  private async transfer(destination: string): Promise<void> {
    const refused = await this.parts.line.transfer!(destination).catch((err: Error) => `I'm sorry, I couldn't put you through just now (${err.message}).`)
    if (refused && this.state !== 'ended') this.say(refused)
  }

  /**
   * A key the caller pressed. Keys are collected into one sequence, ended by `#` or DTMF_GAP_MS
   * without a key; the sequence is the caller's turn, or part of it when they are speaking then.
   */
  private dtmf(digit: string): void {
    if (this.parts.line.unavailable || this.state === 'ended') return
    this.quiet()
    this.digits += digit
    if (this.digitTimer) clearTimeout(this.digitTimer)
    this.digitTimer = null
    if (digit === '#') return void this.keysDone()
    this.digitTimer = setTimeout(() => this.keysDone(), DTMF_GAP_MS)
  }

  private keysDone(): void {
    const keys = this.digits
    this.digits = ''
    this.digitTimer = null
    if (!keys || this.state === 'ended') return
    // Said and keyed in one breath ("my account number is" 1234#): the keys wait for the words.
    if (this.state === 'callerSpeaking' || this.state === 'maybeDone') {
      this.keyedInTurn = `${this.keyedInTurn ?? ''}${keys}`
      return
    }
    const now = this.now()
    void this.answerKeys(keys, '', { speechEndAt: now, endpointedAt: now, sttFinalAt: now })
  }

  /** A turn with keys in it: the transcript holds them as `[keypad] 1234#` after any words, the agent reads what was pressed. */
  private async answerKeys(keys: string, words: string, marks: { speechEndAt: number; endpointedAt: number; sttFinalAt: number }): Promise<void> {
    this.dropEarly()
    this.resumeText = null
    await this.parts.line.customerSaid([words, keypadLine(keys)].filter(Boolean).join(' '))
    if (this.state === 'ended') return
    const turn = this.voice.reply([words, keypadPrompt(keys)].filter(Boolean).join(' '), false)
    turn.latency = { turn: turn.id, ...marks, llmFirstTokenAt: null, ttsFirstByteAt: null, firstAudioSentAt: null, firstMarkEchoedAt: null }
    this.hear(turn, true)
  }

  /** The caller did something: the silence timeout starts over once the agent is listening again. */
  private quiet(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer)
    this.silenceTimer = null
  }

  private armSilence(): void {
    this.quiet()
    if (this.state !== 'listening') return
    this.silenceTimer = setTimeout(() => void this.endPolitely(VOICE_LINES.silence, 'answered'), this.parts.line.silenceTimeoutMs ?? SILENCE_TIMEOUT_MS)
  }

  /** Ends the call from outside (the service is shutting down): the agent says `goodbye`, then hangs up (`answered`). */
  endWith(goodbye: string): void {
    void this.endPolitely(goodbye, 'answered')
  }

  /** Says goodbye (when there is something to say), then hangs up. The first reason to end wins. */
  private async endPolitely(goodbye: string | null, hangup: 'answered' | 'failed', error?: string): Promise<void> {
    if (this.endReason || this.state === 'ended') return
    this.endReason = { hangup, error }
    if (!goodbye) return this.hangUp()
    if (this.playout.speaking) this.playout.clear()
    this.dropEarly()
    this.say(goodbye, { endAfter: true })
    // A line that never confirms the goodbye played still ends: ~15 characters a second, plus grace.
    setTimeout(() => void this.hangUp(), goodbye.length * 70 + 3_000)
  }

  private endReason: { hangup: 'answered' | 'failed'; error?: string } | null = null
  private hungUp = false

  private async hangUp(): Promise<void> {
    if (this.hungUp || this.state === 'ended') return
    this.hungUp = true
    await this.parts.line.hangUp(this.endReason ?? { hangup: 'answered' })
  }
}

function joined(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
