/**
 * One call's voice pipeline, transport-agnostic: inbound frames in (`frame`), outbound frames out
 * (`send`), the call feature behind `CallLine`. Its stages are built and linked in pipeline.ts.
 *
 * This is an adapter between the stages and the turn-taking chart (machines/voice-turn.ts), which
 * makes every decision and holds every wait of the call: it tells the chart what the VAD heard
 * (caller-audio.ts), what the speech-to-text engine made of it (caller-words.ts, judged by the
 * end-of-turn rules, end-of-turn.ts), keypad digits and the line's marks, and carries out the
 * effects the chart names on the agent's side (agent-turns.ts). The chart's waits and the
 * session's `now` run on one clock: the system's on a call, a simulated one in tests.
 *
 * Audio-rate work never touches the call actor: the session tells the call feature only what a
 * call record needs (transcript lines, per-turn latency, the end).
 */
import { type Actor, createActor } from 'xstate'
import { type CallEnding, type OverlapCounts, turnState, type VoiceTurnEvent, voiceTurnMachine } from '../../machines/voice-turn'
import { actorTimers, systemClock } from '../clock'
import type { AgentTurns } from './agent-turns'
import type { PipelineState, SessionParts } from './call-line'
import type { CallerAudio } from './caller-audio'
import type { CallerWords } from './caller-words'
import { DEFAULT_DIALS, withPatience } from './dials'
import { awaitingFinal, endOfTurn, TRAILING_WAIT_MS } from './end-of-turn'
import { type InboundFrame, msOf } from './frames'
import { finalVerdict, STOP_WORDS, turnInput } from './interruption'
import { VOICE_LINES } from './phrases'
import { buildCallPipeline, type CallPipeline, type ChartSide } from './pipeline'
import type { Playout, Timers } from './playout'
import { SpeechError } from './ports/stt'
import type { ReplyTurn } from './reply-turn'
import { closeSession } from './session-close'
import { TalkedInto } from './talked-into'
import { TURN_WAITS } from './turn-waits'
import { chartEventOf, VENDOR_JUDGED } from './vendor-turns'

export type { CallLine, LiveSession, PipelineState, SessionParts } from './call-line'

/**
 * How long a hand-off (a transfer) waits for the sentence the caller hears to end: the longest
 * sentence the chunker makes is ~10 s of speech (sentences.ts MAX_CHARS): only stalled audio is cut.
 */
export const HAND_OFF_SENTENCE_MS = 10_000
/**
 * How long answers are held for a hand-off that neither took the line nor was called off: the
 * network takes or refuses one within 15 s (transfers.ts HAND_OFF_WAIT_MS), after the sentence.
 */
export const HAND_OFF_HOLD_MS = HAND_OFF_SENTENCE_MS + 15_000

/** The chart's states in which the agent's audio plays, or an answer released for the line is about to (`thinking`). */
const OVER_AGENT_AUDIO: ReadonlySet<PipelineState> = new Set(['opening', 'thinking', 'speaking', 'resuming'])

export class VoiceSession {
  readonly chart: Actor<typeof voiceTurnMachine>
  readonly pipeline: CallPipeline
  private readonly now: () => number
  private readonly audio: CallerAudio
  private readonly words: CallerWords
  private readonly agent: AgentTurns
  private readonly playout: Playout
  private hungUp = false
  /** Turns ended so far (commits): a final that comes after a later commit ends an earlier piece of the turn. */
  private commits = 0
  /** The final words a commit waits for: if the call ends meanwhile, they are still the caller's. */
  private finalInFlight: Promise<string> | null = null
  private reported = { state: '', why: '' }
  private readonly talkedInto = new TalkedInto((count) => this.parts.line.talkedInto?.(count))
  private readonly timers: Timers
  /** A hand-off holds answers back: the timer that lets them go if the line is not taken. */
  private handOffHold: unknown = null

  constructor(private readonly parts: SessionParts) {
    const { stream } = parts
    const clock = stream ? { now: () => stream.now(), ...actorTimers(stream) } : parts.actor?.clock
    const clockNow = clock?.now?.bind(clock)
    this.now = parts.now ?? clockNow ?? (() => performance.now())
    const timers: Timers | undefined = clock ? { setTimeout: (fn, ms) => clock.setTimeout(fn, ms), clearTimeout: (id) => clock.clearTimeout(id) } : undefined
    this.timers = timers ?? actorTimers(systemClock)
    this.pipeline = buildCallPipeline(parts, this.chartSide(), { now: this.now, timers })
    this.audio = this.pipeline.stage('callerAudio')
    this.words = this.pipeline.stage('speechToText')
    this.agent = this.pipeline.stage('agent')
    this.playout = this.pipeline.stage('playout')
    this.chart = this.createChart()
  }

  /** What the stages tell the chart, as its events (or what the session makes of them first). */
  private chartSide(): ChartSide {
    return {
      over: () => this.state === 'ended',
      speechStarted: (onset) => this.send({ type: 'speech.start', onset, spokenMs: this.audio.detector.spokenMs }),
      // Only while the agent's audio plays, or it has stopped for this speech, is there anything for more of it to decide.
      speechGoesOn: (onset) => void ((OVER_AGENT_AUDIO.has(this.state) || this.state === 'interrupted') && this.send({ type: 'speech.onset', onset, spokenMs: this.audio.detector.spokenMs })),
      speechPaused: (at) => this.paused(at),
      heard: (heard, stable) => this.heard(heard, stable),
      turn: (event) => {
        const told = chartEventOf(event, (text) => this.turnWords(text), this.audio.detector.lastSpeech)
        if (told) this.send(told)
      },
      key: (digit) => this.send({ type: 'dtmf', digit }),
      replySent: () => this.send({ type: 'reply.audio' }),
      agentStopped: (unheard) => this.send({ type: 'agent.stopped', unheard }),
      played: (turn) => this.played(turn),
      ttsFailed: (err) => this.end(null, 'failed', `text-to-speech failed: ${err.message}`),
    }
  }

  /** The chart, its effects carried out here. */
  private createChart(): Actor<typeof voiceTurnMachine> {
    const { parts, agent } = this
    const chart = voiceTurnMachine.provide({
      actions: {
        // Only a turn that reads as done is worth a reply before the wait is over: one that trails off or says nothing yet would mostly be cancelled.
        // Words still to be finalised decide nothing either way (the final's verdict will), nor do an engine's that judges turns itself (its own events will).
        preempt: (_, { text, shape }) => (shape === 'pending' || shape === 'vendor' ? undefined : shape === 'complete' || shape === 'number' ? agent.preempt(text) : agent.dropEarly()),
        cancelPreempt: () => agent.dropEarly(),
        commitTurn: () => void this.commit(),
        answer: (_, { text, keys, ...marks }) => {
          const queued = parts.stt.queuedMs
          agent.answer(text, keys, queued === undefined ? marks : { ...marks, sttQueueMs: queued })
        },
        withdrawAnswer: () => void agent.withdraw(),
        stopAgent: () => this.pipeline.interrupt({ kind: 'stop' }),
        resumeSentence: (_, { text }) => this.pipeline.interrupt({ kind: 'resume', rest: text }),
        askRepeat: () => agent.say(VOICE_LINES.repeat),
        letGo: () => {
          this.audio.detector.end()
          this.words.dropped()
        },
        answerDigits: (_, { digits }) => {
          const now = this.now()
          agent.answer('', digits, { speechEndAt: now, endpointedAt: now, sttFinalAt: now })
        },
        endCall: (_, { reason, why }) => this.end(VOICE_LINES[reason], 'answered', undefined, why),
        sayGoodbye: (_, ending) => {
          if (!ending.goodbye) return void this.hangUp(ending)
          this.pipeline.interrupt({ kind: 'end' })
          agent.dropEarly()
          agent.settle()
          agent.say(ending.goodbye, { endAfter: true })
        },
        hangUp: (_, ending) => void this.hangUp(ending),
        answeredUnknown: () => this.answeredBy('unknown'),
      },
      guards: {
        // Judged up to `at`, and no speech half-heard: a resumption needs MIN_SPEECH_MS to be
        // called one, and a turn must not end on the first windows of the caller going on.
        audioJudged: (_, { at }) => this.audio.judgedUpTo >= at && !this.audio.detector.resuming,
        answerUnheard: ({ context }) => !context.answering || agent.unheard,
      },
    })
    const a = parts.actor ?? {}
    const line = parts.line
    const actor = createActor(chart, {
      input: turnInput(line, this.dials, this.words.judge),
      ...(a.systemId ? { systemId: a.systemId } : {}),
      ...(a.inspect ? { inspect: a.inspect } : {}),
      clock: parts.stream ? actorTimers(parts.stream) : (a.clock ?? actorTimers(systemClock)),
    })
    // The console hears the turn's state and why, each time either changes; the call, how speech over the agent ended.
    let overlaps: OverlapCounts | null = null
    actor.subscribe((s) => {
      if (s.context.overlaps !== overlaps) {
        overlaps = s.context.overlaps
        line.overlaps?.({ ...overlaps })
      }
      const state = turnState(s.value)
      this.talkedInto.state(state, this.now())
      if (state === this.reported.state && s.context.why === this.reported.why) return
      this.reported = { state, why: s.context.why }
      line.state(state, s.context.why)
    })
    return actor
  }

  private get dials() {
    return this.parts.line.dials ?? DEFAULT_DIALS
  }

  /** Waiting to be told who answered (a call that leaves a voicemail): the chart's wait. */
  private get awaitingAnswer(): boolean {
    return this.chart.getSnapshot().matches({ live: { answer: 'awaiting' } })
  }

  get state(): PipelineState {
    return turnState(this.chart.getSnapshot().value)
  }

  /**
   * When the call runs on its caller's audio (stream-clock.ts): how far the VAD has judged the
   * stream (ms), and whether the agent's side is making what comes next — an answer being made, or
   * the next audio of one not synthesised yet — for which a caller on the call's audio waits, so
   * how long the host takes to make it is no time at all on the line. Null on any other call.
   */
  get pace(): { judged: number; hold: boolean } | null {
    const stream = this.parts.stream
    if (!stream) return null
    const state = this.state
    return { judged: stream.judgedUpTo, hold: state === 'thinking' || (OVER_AGENT_AUDIO.has(state) && this.playout.starved) }
  }

  /** Frames dropped because the VAD fell behind. */
  get dropped(): number {
    return this.audio.dropped
  }

  /** The stream started: the agent speaks first; the call's waits start. The rate is not kept: each audio frame carries its own. */
  start(_sampleRate: number): void {
    this.chart.start()
    const { line } = this.parts
    if (line.unavailable) this.end(VOICE_LINES.unavailable, 'answered', line.unavailable, 'no agent serves this line')
    else if (line.voicemail) this.send({ type: 'answer.await' })
    else this.agent.say(line.opening, { opening: true })
  }

  /** Words for the caller from outside the conversation (a warm transfer that did not connect). */
  announce(text: string): void {
    if (this.state !== 'ended') this.agent.say(text)
  }

  /**
   * Who answered a call that leaves a voicemail: a person (or no verdict) hears the opening; a
   * machine whose greeting has ended hears the message, then the call ends `voicemail`; a fax
   * is hung up on (`voicemail`: no person was reached). Only the first verdict counts.
   */
  answeredBy(by: 'human' | 'machine' | 'fax' | 'unknown'): void {
    if (!this.awaitingAnswer || this.state === 'ended') return
    this.send({ type: 'answer.known' })
    const { line } = this.parts
    line.log('info', 'answered by', { by })
    if (by === 'human' || by === 'unknown' || !line.voicemail) return void this.agent.say(line.opening, { opening: true })
    const why = by === 'fax' ? 'a fax answered' : 'a machine answered: the message is left after its beep'
    this.send({ type: 'call.close', goodbye: by === 'fax' ? null : line.voicemail, hangup: 'voicemail', why })
  }

  /**
   * The network is about to take the call (a transfer): a pause lets the sentence the caller hears finish (at most HAND_OFF_SENTENCE_MS),
   * and no answer starts until the line goes or the hand-off is called off. Resolves once that sentence has played, or the wait is over.
   */
  handingOff(): Promise<void> {
    if (this.state === 'ended') return Promise.resolve()
    if (this.handOffHold !== null) this.timers.clearTimeout(this.handOffHold)
    this.handOffHold = this.timers.setTimeout(() => this.handOffFailed(), HAND_OFF_HOLD_MS)
    return new Promise((resolve) => {
      const bound = this.timers.setTimeout(resolve, HAND_OFF_SENTENCE_MS)
      this.pipeline.interrupt({ kind: 'pause' })
      void this.agent.paused.then(() => {
        this.timers.clearTimeout(bound)
        resolve()
      })
    })
  }

  /** The hand-off did not happen: the agent answers again. */
  handOffFailed(): void {
    if (this.handOffHold !== null) this.timers.clearTimeout(this.handOffHold)
    this.handOffHold = null
    this.pipeline.interrupt({ kind: 'resume', rest: null })
  }

  /** A frame from the line. */
  frame(frame: InboundFrame): void {
    if (this.state === 'ended') return
    if (frame.kind === 'audio') this.parts.stream?.heard(msOf(frame.pcm, frame.sampleRate), frame.timestamp)
    // Until it is known who answered, what the line says is nobody's turn (a machine's greeting): recorded, not answered.
    if (this.awaitingAnswer) {
      if (frame.kind === 'audio') this.parts.record?.fromCaller(frame.pcm, frame.sampleRate)
      // Nothing here for the VAD to judge: the audio's time has passed all the same.
      if (frame.kind === 'audio') this.parts.stream?.judged(this.now())
      return
    }
    this.pipeline.push(frame)
  }

  /** The socket can take more. */
  drained(): void {
    this.playout.drained()
  }

  /**
   * The call is over (either side): the chart's waits stop, the heard part of the current turn is
   * final (session-close.ts). Resolves once what the caller heard of it is stored.
   */
  async close(): Promise<void> {
    if (this.state === 'ended') return this.agent.stored
    const { chart, words, agent, finalInFlight } = this
    await closeSession({
      chart,
      words,
      agent,
      stt: this.parts.stt,
      finalInFlight,
      stopWaits: () => {
        if (this.handOffHold !== null) this.timers.clearTimeout(this.handOffHold)
        this.handOffHold = null
      },
    })
  }

  /** Ends the call from outside (the service is shutting down): the agent says `goodbye`, then hangs up (`answered`). */
  endWith(goodbye: string): void {
    this.end(goodbye, 'answered', undefined, 'the service is shutting down')
  }

  /** The caller's speech paused: the chart judges the turn on the words so far. */
  private paused(lastSpeechAt: number): void {
    this.words.paused()
    this.send({ type: 'speech.pause', at: lastSpeechAt, now: this.now(), ...this.judge(this.turnWords(this.words.heard)) })
  }

  /** The turn's words so far: those held from before the caller went on (when words judge turns), then `text`. */
  private turnWords(text: string): string {
    const held = this.words.judge ? this.chart.getSnapshot().context.held : ''
    return [held, text].filter(Boolean).join(' ')
  }

  /** What the caller said so far changed: an early reply on other words is cancelled; the chart judges the words again. */
  private heard(heard: string, stable: boolean): void {
    const text = this.turnWords(heard)
    this.agent.wordsChanged(text)
    // While the caller still speaks, only words the engine will not revise may start a reply early.
    if (!stable && this.state === 'callerSpeaking') return
    this.send({ type: 'transcript', now: this.now(), ...this.judge(text) })
  }

  /** The end-of-turn rules' verdict on the caller's words: how long a silence ends the turn, and why. */
  private judge(text: string): { text: string; waitMs: number; why: string; shape: string } {
    if (this.words.vendorTurns) return { text, ...VENDOR_JUDGED }
    const upperMs = this.parts.line.endpointingMaxMs ?? TRAILING_WAIT_MS
    const rules = this.words.finalDue ? awaitingFinal(upperMs) : endOfTurn(text, upperMs, this.pipeline.cues.cues(), TURN_WAITS[this.words.profile])
    const judged = withPatience(rules, this.dials.patience, this.words.profile === 'hosted')
    return { text, waitMs: judged.waitMs, why: judged.why, shape: judged.shape }
  }

  /** The chart ended the caller's turn: its final words go back to the chart, which decides what they mean. */
  private async commit(): Promise<void> {
    // The turn's end where its wait fell due in the caller's audio: the same on every run of one call.
    const endpointedAt = this.parts.stream?.dueNow() ?? this.now()
    const commit = ++this.commits
    const speechMs = this.audio.detector.spokenMs
    this.audio.detector.end()
    let text: string
    const final = this.words.final()
    this.finalInFlight = final
    try {
      text = await final
    } catch (err) {
      this.parts.line.log('warn', 'speech-to-text failed', { err: String(err) })
      // At capacity the engine lost these words only: the caller is asked again (an earlier piece
      // of a turn ended again since is simply gone; the later final answers the turn).
      if (err instanceof SpeechError && err.busy) return void (commit === this.commits && this.send({ type: 'words.lost', why: err.message }))
      return this.end(VOICE_LINES.trouble, 'failed', `speech-to-text failed: ${(err as Error).message}`)
    } finally {
      if (this.finalInFlight === final) this.finalInFlight = null
    }
    const { interrupted } = this.chart.getSnapshot().context
    const soundsLikeStop = interrupted && !this.words.judge && !!this.parts.stt.soundsLike?.(text, STOP_WORDS)
    const verdict = finalVerdict({ text, speechMs, wordsJudge: this.words.judge, soundsLikeStop }, interrupted, this.dials.interruptions)
    if (verdict.why) this.parts.line.log('info', 'speech over the agent judged', { text, speechMs, ...verdict })
    this.send({ type: 'words.final', text, ...verdict, endpointedAt, sttFinalAt: this.now(), earlier: commit !== this.commits })
  }

  /** The turn the caller heard has played out and is stored: the call ends, is put through, or goes on. */
  private played(turn: ReplyTurn): void {
    if (this.state === 'ended') return
    if (turn.endAfter) return void this.hangUp(this.chart.getSnapshot().context.ending)
    if (turn.reply?.transfer && this.parts.line.transfer) return void this.transfer(turn.reply.transfer)
    // Keys the agent pressed go to the line after its words, as a turn of their own (a phone menu hears tones).
    if (turn.reply?.digits) return void this.agent.pressKeys(turn.reply.digits)
    if (turn.reply?.endCall) this.end(null, 'answered', undefined, 'the agent ended the call')
    else this.send({ type: 'reply.done' })
  }

  /** The agent puts the caller through: the network then closes the line; a refusal is said and the call goes on. */
  private async transfer(destination: string): Promise<void> {
    const refused = await this.parts.line.transfer!(destination).catch((err: Error) => `I'm sorry, I couldn't put you through just now (${err.message}).`)
    if (refused && this.state !== 'ended') this.agent.say(refused)
  }

  /** The call is to end: the chart takes the first reason (saying `goodbye` first when there is one). */
  private end(goodbye: string | null, hangup: 'answered' | 'failed', error?: string, why = error ?? 'the call ends'): void {
    this.send({ type: 'call.close', goodbye, hangup, ...(error === undefined ? {} : { error }), why })
  }

  private async hangUp(ending: CallEnding | null): Promise<void> {
    if (this.hungUp || this.state === 'ended') return
    this.hungUp = true
    const { hangup, error } = ending ?? { hangup: 'answered' as const }
    await this.parts.line.hangUp(error === undefined ? { hangup } : { hangup, error })
  }

  /** Tells the chart, while the call goes on (an engine may report after it ended). */
  private send(event: VoiceTurnEvent): void {
    if (event.type === 'speech.start' && this.state !== 'ended') this.talkedInto.speech(this.now())
    if (this.state !== 'ended') this.chart.send(event)
  }
}
