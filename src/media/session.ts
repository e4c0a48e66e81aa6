/**
 * One call's voice pipeline, transport-agnostic: inbound frames in (`frame`), outbound frames out
 * (`send`), the call feature behind `CallLine`. Stages: decode (the serializer) → VAD → endpointing
 * → STT → the agent (the conversation engine, streaming) → sentences → TTS → resample → paced send
 * with marks (playout.ts). Turn-taking lives here: the agent opens the call, answers each finished
 * utterance, stops the moment the caller really interrupts, ignores backchannels, and resumes its
 * sentence after a false interruption.
 *
 * Audio-rate work never touches the call actor: the session tells the call feature only what a
 * call record needs (transcript lines, per-turn latency, the end).
 */
import type { InboundFrame, OutboundFrame } from './frames'
import { PHONE_RATE, resample } from './codecs'
import { Playout, CHUNK_MS } from './playout'
import { SentenceChunker } from './sentences'
import { TurnDetector } from './turns'
import type { VoiceActivity } from './vad'
import type { SttSession } from '../providers/stt/port'
import type { TextToSpeech } from '../providers/tts/port'
import { SpeechQueue } from './speech-queue'
import { isBackchannel, VOICE_LINES } from './phrases'
import type { TurnLatency } from './latency'

/**
 * Speech over the agent shorter than this is a backchannel ("uh-huh", "okay"), not an
 * interruption: 300 ms is about one short word, and what LiveKit's and Pipecat's interruption
 * filters use as their minimum.
 */
export const BACKCHANNEL_MS = 300
/** Caller silence (nobody speaking) that ends the call politely: Vapi's and Retell's default is 30 s. */
export const SILENCE_TIMEOUT_MS = 30_000
/** Keypad digits are collected until this long without one (a person typing a PIN pauses < 1 s). */
export const DTMF_GAP_MS = 1_500
/** Inbound frames waiting for the VAD: 2 s of 20 ms frames. Past it the oldest are dropped (counted). */
export const MAX_INBOUND_PENDING = 100

export type PipelineState = 'opening' | 'listening' | 'thinking' | 'speaking' | 'interrupted' | 'ended'

export interface AgentReply {
  reply: string
  endCall: boolean
  /** The stored reply, revised to what the caller heard when they interrupted. */
  messageId: string | null
}

/** What the session needs from the calls feature (and nothing else of it). */
export interface CallLine {
  callId: string
  /** What the agent says first: the purpose (outbound) or the greeting (inbound). */
  opening: string
  voice: string
  language: string
  silenceMs: number
  maxCallSeconds: number
  /** Caller silence that ends the call; SILENCE_TIMEOUT_MS unless given. */
  silenceTimeoutMs?: number
  /**
   * Why no agent serves this line (nothing is published): the session says VOICE_LINES.unavailable
   * instead of the opening, answers nothing, and ends; the reason becomes the call's `error`.
   */
  unavailable?: string
  respond(text: string, onText: (piece: string) => void, signal: AbortSignal): Promise<AgentReply>
  /** The agent's line as the caller heard it: stored in memory (replacing the streamed reply) and the transcript. */
  agentSaid(text: string, messageId: string | null, opening: boolean): Promise<void>
  customerSaid(text: string): Promise<void>
  latency(turn: TurnLatency): void
  state(state: PipelineState): void
  /** The call should end (the agent ended it, or a limit did). */
  hangUp(reason: { hangup: 'answered' | 'failed'; error?: string }): Promise<void>
  log(level: 'info' | 'warn', message: string, data?: object): void
}

export interface SessionParts {
  line: CallLine
  vad: VoiceActivity
  stt: SttSession
  tts: TextToSpeech
  send: (frame: OutboundFrame) => boolean
  chunkMs?: number
  /** Both sides, for the recording. */
  record?: { fromCaller(pcm: Int16Array, rate: number): void; fromAgent(pcm: Int16Array, rate: number): void }
  now?: () => number
}

interface Turn {
  id: number
  controller: AbortController
  latency: TurnLatency | null
  reply: AgentReply | null
  endAfter: boolean
}

export class VoiceSession {
  state: PipelineState = 'opening'
  private readonly playout: Playout
  private readonly turns: TurnDetector
  private readonly now: () => number
  private turn: Turn | null = null
  private turnSeq = 0
  private inbound: Promise<void> = Promise.resolve()
  private pending = 0
  dropped = 0
  private resumeText: string | null = null
  private digits = ''
  private digitTimer: ReturnType<typeof setTimeout> | null = null
  private silenceTimer: ReturnType<typeof setTimeout> | null = null
  private limitTimer: ReturnType<typeof setTimeout> | null = null
  private ending = false
  private rate = PHONE_RATE

  constructor(private readonly parts: SessionParts) {
    this.now = parts.now ?? (() => performance.now())
    this.turns = new TurnDetector(parts.line.silenceMs)
    this.playout = new Playout((f) => parts.send(f), {
      rate: PHONE_RATE,
      chunkMs: parts.chunkMs ?? CHUNK_MS,
      now: this.now,
      onFirstSent: (id, at) => {
        if (this.turn?.id === id) {
          if (this.turn.latency) this.turn.latency.firstAudioSentAt = at
          this.setState('speaking')
        }
      },
      onFirstHeard: (id, at) => {
        if (this.turn?.id === id && this.turn.latency) this.turn.latency.firstMarkEchoedAt = at
      },
      onSent: (f) => {
        if (f.kind === 'audio') parts.record?.fromAgent(f.pcm, f.sampleRate)
      },
    })
  }

  /** The stream started: the agent speaks first; the call's length limit starts. */
  start(sampleRate: number): void {
    this.rate = sampleRate
    if (this.parts.line.unavailable) return void this.endPolitely(VOICE_LINES.unavailable, 'answered', this.parts.line.unavailable)
    this.limitTimer = setTimeout(() => void this.endPolitely(VOICE_LINES.timeLimit, 'answered'), this.parts.line.maxCallSeconds * 1000)
    void this.say(this.parts.line.opening, { opening: true })
  }

  /** A frame from the line. */
  frame(frame: InboundFrame): void {
    if (this.state === 'ended') return
    if (frame.kind === 'audio') {
      // Bounded: if the VAD falls behind, the oldest audio goes (counted), never memory.
      if (this.pending >= MAX_INBOUND_PENDING) {
        this.dropped++
        return
      }
      this.pending++
      this.inbound = this.inbound.then(() => this.audio(frame.pcm, frame.sampleRate)).finally(() => this.pending--)
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
    this.setState('ended')
    for (const t of [this.digitTimer, this.silenceTimer, this.limitTimer]) if (t) clearTimeout(t)
    this.turn?.controller.abort()
    this.playout.close()
    void this.parts.stt.close().catch(() => {})
    await this.stored
  }

  /** The last turn's storing of what was heard. */
  private stored: Promise<void> = Promise.resolve()

  private async audio(pcm: Int16Array, rate: number): Promise<void> {
    if (this.state === 'ended') return
    this.parts.record?.fromCaller(pcm, rate)
    const stt = this.parts.stt
    stt.push(resample(pcm, rate, stt.sampleRate))
    const windows = await this.parts.vad.push(pcm, rate)
    for (const w of windows) {
      const at = this.now()
      const event = this.turns.window(w.speech, w.ms, at)
      if (event?.type === 'speech_start') this.quiet()
      if (this.state === 'speaking' && !this.parts.line.unavailable && this.turns.turnLastedMs(at) >= BACKCHANNEL_MS) this.bargeIn()
      if (event?.type === 'speech_end') void this.utterance(event.at, at)
    }
  }

  /** Customer speech over the agent, long enough to be meant: stop talking now. */
  private bargeIn(): void {
    const turn = this.turn
    const cleared = this.playout.clear()
    turn?.controller.abort()
    this.resumeText = cleared?.unheardOfSentence || null
    this.setState('interrupted')
    this.parts.line.log('info', 'barge-in: playback cleared', { turn: cleared?.turn, heard: cleared?.heard.length })
  }

  private async utterance(speechEndAt: number, endpointedAt: number): Promise<void> {
    // Nobody answers on a line no agent serves: the caller hears the notice out.
    if (this.parts.line.unavailable) return
    const wasSpeaking = this.playout.speaking && this.state === 'speaking'
    let text: string
    try {
      text = (await this.parts.stt.finalize()).trim()
    } catch (err) {
      this.parts.line.log('warn', 'speech-to-text failed', { err: String(err) })
      return void this.endPolitely(VOICE_LINES.trouble, 'failed', `speech-to-text failed: ${(err as Error).message}`)
    }
    const sttFinalAt = this.now()
    if (this.state === 'ended') return
    // Noise, or an "okay" long enough to have stopped the agent: it picks its sentence up again
    // instead of falling silent or answering an acknowledgement.
    if (!text || (this.state === 'interrupted' && isBackchannel(text))) {
      if (this.state === 'interrupted' && this.resumeText) {
        const rest = this.resumeText
        this.resumeText = null
        return void this.say(rest, { resumed: true })
      }
      if (this.state === 'interrupted') this.setState('listening')
      return this.armSilence()
    }
    // A short "uh-huh" while the agent talks: it keeps talking.
    if (wasSpeaking && isBackchannel(text)) return
    this.resumeText = null
    if (this.state === 'speaking' || this.state === 'thinking') this.bargeIn()
    await this.parts.line.customerSaid(text)
    await this.respond(text, { speechEndAt, endpointedAt, sttFinalAt })
  }

  private async respond(text: string, marks: { speechEndAt: number; endpointedAt: number; sttFinalAt: number }): Promise<void> {
    const turn = this.begin(true)
    turn.latency = { turn: turn.id, ...marks, llmFirstTokenAt: null, ttsFirstByteAt: null, firstAudioSentAt: null, firstMarkEchoedAt: null }
    this.setState('thinking')
    const queue = this.speak(turn)
    const chunker = new SentenceChunker()
    try {
      const reply = await this.parts.line.respond(
        text,
        (piece) => {
          if (turn.latency && turn.latency.llmFirstTokenAt === null) turn.latency.llmFirstTokenAt = this.now()
          for (const s of chunker.push(piece)) queue.push(s)
        },
        turn.controller.signal,
      )
      turn.reply = reply
      turn.endAfter = reply.endCall
      for (const s of chunker.flush()) queue.push(s)
      // A turn with no streamed text (tools only, the engine's fallback line): say the stored reply.
      if (!queue.count && reply.reply) queue.push(reply.reply)
    } catch (err) {
      if (turn.controller.signal.aborted) return queue.close()
      this.parts.line.log('warn', 'the agent could not answer', { err: String(err) })
      queue.push(VOICE_LINES.trouble)
    }
    queue.close()
  }

  /** Speaks fixed text (the opening, a resumed sentence, a goodbye). */
  private async say(text: string, options: { opening?: boolean; resumed?: boolean; endAfter?: boolean } = {}): Promise<void> {
    const turn = this.begin(false, options.opening)
    turn.endAfter = options.endAfter ?? false
    if (!options.resumed) this.setState('thinking')
    const queue = this.speak(turn)
    const chunker = new SentenceChunker()
    for (const s of [...chunker.push(text), ...chunker.flush()]) queue.push(s)
    queue.close()
  }

  private begin(answer: boolean, opening = false): Turn {
    this.turn?.controller.abort()
    const turn: Turn = { id: ++this.turnSeq, controller: new AbortController(), latency: null, reply: null, endAfter: false }
    this.turn = turn
    this.quiet()
    this.playout.begin(turn.id, (heard, complete) => {
      const previous = this.stored
      this.stored = previous.then(() => this.played(turn, heard, complete, answer, opening))
    })
    return turn
  }

  /** Sentences → TTS → the line, in order; the turn's signal stops it. */
  private speak(turn: Turn): SpeechQueue {
    const { tts, line } = this.parts
    const queue = new SpeechQueue()
    void (async () => {
      try {
        for await (const sentence of queue) {
          if (turn.controller.signal.aborted) break
          const index = this.playout.sentence(sentence)
          for await (const pcm of tts.synthesize(sentence, { voice: line.voice, language: line.language, signal: turn.controller.signal })) {
            if (turn.latency && turn.latency.ttsFirstByteAt === null) turn.latency.ttsFirstByteAt = this.now()
            await this.playout.audio(index, resample(pcm, tts.sampleRate, PHONE_RATE))
          }
          this.playout.sentenceDone(index)
        }
      } catch (err) {
        if (!turn.controller.signal.aborted) {
          line.log('warn', 'text-to-speech failed', { err: String(err) })
          this.endReason ??= { hangup: 'failed', error: `text-to-speech failed: ${(err as Error).message}` }
          void this.hangUp()
        }
      }
      if (!turn.controller.signal.aborted) this.playout.end()
    })()
    return queue
  }

  /** The turn's audio has played (or was cut): memory and transcript keep what was heard. */
  private async played(turn: Turn, heard: string, complete: boolean, answer: boolean, opening: boolean): Promise<void> {
    const { line } = this.parts
    if (heard || turn.reply?.messageId) await line.agentSaid(heard, answer ? (turn.reply?.messageId ?? null) : null, opening).catch((err) => line.log('warn', 'could not store what the agent said', { err: String(err) }))
    if (turn.latency && turn.latency.firstAudioSentAt !== null) line.latency(turn.latency)
    if (this.turn !== turn || this.state === 'ended') return
    if (turn.endAfter) return void this.hangUp()
    if (turn.reply?.endCall) return void this.endPolitely(null, 'answered')
    // Cut by the caller: what they are saying decides what comes next (utterance()).
    if (this.state === 'interrupted') return
    this.setState('listening')
    this.armSilence()
  }

  private dtmf(digit: string): void {
    if (this.parts.line.unavailable) return
    this.quiet()
    this.digits += digit
    if (this.digitTimer) clearTimeout(this.digitTimer)
    this.digitTimer = setTimeout(() => {
      const digits = this.digits
      this.digits = ''
      const now = this.now()
      void this.parts.line.customerSaid(`[keypad] ${digits}`).then(() => this.respond(`(The caller pressed ${digits.split('').join(' ')} on the keypad.)`, { speechEndAt: now, endpointedAt: now, sttFinalAt: now }))
    }, DTMF_GAP_MS)
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

  /** Says goodbye (when there is something to say), then hangs up. The first reason to end wins. */
  private async endPolitely(goodbye: string | null, hangup: 'answered' | 'failed', error?: string): Promise<void> {
    if (this.endReason || this.state === 'ended') return
    this.endReason = { hangup, error }
    if (!goodbye) return this.hangUp()
    if (this.playout.speaking) this.playout.clear()
    await this.say(goodbye, { endAfter: true })
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

  private setState(state: PipelineState): void {
    if (this.state === state || this.state === 'ended') return
    this.state = state
    this.parts.line.state(state)
  }
}
