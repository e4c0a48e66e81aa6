/**
 * What a call's voice session is given: the call feature behind `CallLine` (the agent, the call
 * record, the hang-up) and the pipeline's parts (VAD, speech engines, the socket, the recorder).
 */
import type { ActorOptions, AnyActorLogic, InspectionEvent, Observer } from 'xstate'
import type { OverlapCounts, VoiceTurnState } from '../../machines/voice-turn'
import type { VoiceDials } from './dials'
import type { InboundFrame, OutboundFrame } from './frames'
import type { TurnLatency } from './latency'
import type { SttSession } from './ports/stt'
import type { TextToSpeech } from './ports/tts'
import type { AgentReply } from './reply-turn'
import type { StreamClock } from './stream-clock'
import type { VoiceActivity } from './vad'

export type PipelineState = VoiceTurnState

/** What the session needs from the calls feature (and nothing else of it). */
export interface CallLine {
  callId: string
  /** What the agent says first: the purpose (outbound) or the greeting (inbound). */
  opening: string
  voice: string
  language: string
  /** The longest end-of-turn wait, for a caller who trails off (the agent's `voice.endpointingMs`); it caps the others. */
  endpointingMaxMs?: number
  /** The agent's speed, patience and interruption rules (dials.ts); DEFAULT_DIALS unless given. */
  dials?: VoiceDials
  maxCallSeconds: number
  /** Caller silence that ends the call; SILENCE_TIMEOUT_MS unless given. */
  silenceTimeoutMs?: number
  /**
   * Why no agent serves this line (nothing is published): the session says VOICE_LINES.unavailable
   * instead of the opening, answers nothing, and ends; the reason becomes the call's `error`.
   */
  unavailable?: string
  /**
   * Keys reach this line only as tones in the caller's audio (the sandbox network): the session
   * listens for them (keypad.ts). A line with `dtmf` messages (Twilio) leaves this off.
   */
  hearsKeypadTones?: boolean
  /**
   * The message to leave when a machine answers (voicemail drop): the session says nothing until
   * it is told who answered (`VoiceSession.answeredBy`); a person hears the opening, a machine
   * (its greeting over, the beep heard) this message, then the call ends `voicemail`.
   */
  voicemail?: string
  /**
   * The agent's answer; `release`, when given, holds every write until the turn is heard (an early
   * reply, or an answer whose first audio is not ready); `stepped` hears that the model's first
   * call has ended while held (a reply that opens with a tool has nothing to say before it runs).
   */
  respond(text: string, onText: (piece: string) => void, signal: AbortSignal, release?: Promise<void>, stepped?: () => void): Promise<AgentReply>
  /**
   * The agent's line as the caller heard it: stored in memory (replacing the streamed reply) and
   * the transcript, in place of what `agentHearing` wrote of the same turn.
   */
  agentSaid(text: string, messageId: string | null, opening: boolean, turn?: number): Promise<void>
  /** What the caller has heard of turn `turn` so far (a sentence or a second at a time), so a crash loses at most the last moment. */
  agentHearing?(text: string, turn: number): void
  customerSaid(text: string): Promise<void>
  latency(turn: TurnLatency): void
  /** How the speech over the agent has ended so far this call (resumed, taken, talked over), each time a count changes. */
  overlaps?(counts: OverlapCounts): void
  /** How many pauses the agent talked into so far this call (talked-into.ts), each time the count grows. */
  talkedInto?(count: number): void
  /** The turn-taking chart's state, and why it is there (the chart's `why`: the rule that chose a wait, why the agent stopped or resumed). */
  state(state: PipelineState, why?: string): void
  /**
   * Put the caller through to the agent's destination `name` (its transfer_call tool, once the reply
   * played): null once the network took the hand-off (it then closes the line), else what to say.
   */
  transfer?(name: string): Promise<string | null>
  /** The call should end (the agent ended it, or a limit did). */
  hangUp(reason: { hangup: 'answered' | 'failed' | 'voicemail'; error?: string }): Promise<void>
  log(level: 'info' | 'warn', message: string, data?: object): void
}

/**
 * A live call's session as the media socket drives it: the cascaded pipeline (session.ts) or a
 * speech-to-speech model (realtime-session.ts).
 */
export interface LiveSession {
  readonly state: PipelineState
  /** Frames dropped because the session fell behind. */
  readonly dropped: number
  /** How a call on its caller's audio paces (VoiceSession.pace); null on any other. */
  readonly pace: { judged: number; hold: boolean } | null
  start(sampleRate: number): void
  frame(frame: InboundFrame): void
  drained(): void
  close(): Promise<void>
  endWith(goodbye: string): void
  answeredBy(by: 'human' | 'machine' | 'fax' | 'unknown'): void
  announce(text: string): void
  handingOff(): Promise<void>
  handOffFailed(): void
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
  /** The session's time, ms; the clock's `now` when it has one, else performance.now(). */
  now?: () => number
  /**
   * The turn-taking chart's id and observer (the XState inspector, INSPECT=1), and the clock every
   * wait of the call runs on (the chart's delays and the playout's pacing): the system's timers
   * unless given; tests step a simulated one (XState's SimulatedClock, whose `now` the session then reads).
   */
  actor?: {
    systemId?: string
    inspect?: Observer<InspectionEvent> | ((e: InspectionEvent) => void)
    clock?: NonNullable<ActorOptions<AnyActorLogic>['clock']> & { now?: () => number }
  }
  /**
   * The caller's audio as the call's clock (stream-clock.ts), in place of `actor.clock`: the
   * session stamps it with each frame's place in the stream and tells it what the VAD has judged.
   * A simulated call on the manual service clock runs on it.
   */
  stream?: StreamClock
  /** Synthesised audio of fixed lines by engine, voice, language and text (phrase-cache.ts): the opening and goodbyes play at once. */
  phrases?: { get(key: string): Int16Array[] | null; put(key: string, audio: Int16Array[]): void }
}
