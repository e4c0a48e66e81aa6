/**
 * A call's pipeline as a value (Pipecat's `Pipeline([...])`): its stages, built and linked here, in
 * the order the call's frames go through them. This is the one place that says what feeds what;
 * the session (session.ts) is the adapter between the stages and the turn-taking chart
 * (machines/voice-turn.ts), which it joins through `ChartSide`. The serializer before the first
 * stage is the bridge's, chosen by the telephony provider (serializers/index.ts).
 *
 * Downstream, stages hand each other typed frames through one seam (`FrameProcessor.push`,
 * frames.ts), handled when pushed, with no queue between them (Pipecat's direct mode): the line's
 * `InboundFrame`s into `CallPipeline.push`; the caller's audio into the audio stage
 * (`CallerAudioFrame`); its audio and the VAD's speech windows into the speech-to-text stage
 * (`SpeechToTextFrame`); the playout's `OutboundFrame`s to the serializer. Interruption is one
 * signal every stage takes (`CallPipeline.interrupt`, interrupt-signal.ts: stop, pause, resume),
 * never queued behind audio: on a stop the playout sends `clear` the moment the chart stops the
 * agent. A call's end (`stop`, a lost socket) is handled by the bridge before any queue.
 *
 * Three hand-overs stay calls, each for a reason a frame would not carry:
 * - Upstream, to the chart (`ChartSide`): the caller's speech starting, going on and pausing, their
 *   words, keys, the reply's first audio and its end. The chart decides; it is not a stage.
 * - The agent → text-to-speech: a turn is a handle (`ReplyTurn`) the agent holds, releases, cuts or
 *   cancels after the call that made it, not a frame that passes through.
 * - Text-to-speech → the playout: the playout numbers each sentence for its marks, and each piece of
 *   audio resolves when there is room for more (the backpressure that paces TTS); a push carries
 *   neither answer back without a queue. Likewise the synchronous queries a stage makes of another
 *   (the agent's level for the echo rule, how far the VAD has judged, whether the agent speaks).
 */
import { isEcho } from '../../machines/voice-turn'
import { AgentTurns } from './agent-turns'
import { AgentVoice } from './agent-voice'
import type { SessionParts } from './call-line'
import { CallerAudio } from './caller-audio'
import { CallerWords } from './caller-words'
import { PHONE_RATE } from './codecs'
import type { FrameProcessor, InboundFrame } from './frames'
import type { Interruption } from './interrupt-signal'
import { KeypadListener } from './keypad'
import { CHUNK_MS, Playout, type Timers } from './playout'
import type { SttTurnEvent } from './ports/stt'
import type { ReplyTurn } from './reply-turn'
import { AgentEcho } from './turn-cues/agent-echo'
import type { OnsetWindow } from './turn-cues/onset'
import { VoiceCues } from './turn-cues/voice-cues'

/** The stages by name, each typed as the part that does it. */
export interface CallStages {
  /** Inbound audio → the recording, the VAD (batched, its own thread) → the caller's speech starting and pausing (caller-audio.ts, turns.ts). */
  callerAudio: CallerAudio
  /** The caller's audio → their words, partials and finals, judged by the end-of-turn rules (caller-words.ts). */
  speechToText: CallerWords
  /** A turn the chart ended → the agent's reply (the conversation engine, the LLM streamed), held, released, cut or resumed as the chart says (agent-turns.ts). */
  agent: AgentTurns
  /** The reply's clauses → speech, resampled to the line's rate (agent-voice.ts, sentences.ts). */
  textToSpeech: AgentVoice
  /** Speech → paced audio frames, each followed by a mark; `clear` at once on barge-in (playout.ts). */
  playout: Playout
  /** What the playout sent, by when the line plays it → the agent's level for the echo rule; cut where a stop or an end drops it (turn-cues/agent-echo.ts). */
  agentEcho: AgentEcho
}

export type StageName = keyof CallStages

/** The stages' order: the one place it is written. */
const ORDER = ['callerAudio', 'speechToText', 'agent', 'textToSpeech', 'playout', 'agentEcho'] as const satisfies readonly StageName[]
/** A stage left out of ORDER does not compile. */
const everyStageOrdered: Exclude<StageName, (typeof ORDER)[number]> extends never ? true : never = true
void everyStageOrdered

/** What the stages tell the turn-taking chart's side (the session), and ask of it. */
export interface ChartSide {
  /** The call is over: nothing more is judged or played. */
  over(): boolean
  /** The caller's speech started (or went on after a pause), went on (each window after that), paused: its last speech at `at`. */
  speechStarted(onset: readonly OnsetWindow[]): void
  speechGoesOn(onset: readonly OnsetWindow[]): void
  speechPaused(at: number): void
  /** What the caller has said this turn changed; `stable`: the engine will not revise it. */
  heard(text: string, stable: boolean): void
  /** An engine that judges turns itself reported one of its turn events. */
  turn?(event: SttTurnEvent): void
  /** A key the caller pressed (a `dtmf` frame, or its tone heard in the audio). */
  key(digit: string): void
  /** The first audio of the reply the caller is to hear went to the line. */
  replySent(): void
  /** A stop cut the agent off: `unheard`, the rest of what it meant to say. */
  agentStopped(unheard: string): void
  /** The turn the caller heard has played out and is stored. */
  played(turn: ReplyTurn): void
  /** Speech could not be made: the call cannot go on. */
  ttsFailed(err: Error): void
}

/** The call's clock: its time, and the timers the playout paces on (the system's unless given). */
export interface PipelineClock {
  now: () => number
  timers?: Timers
}

export class CallPipeline implements FrameProcessor<InboundFrame> {
  /** The stages in the order frames go through them. */
  readonly stages: readonly { readonly name: StageName; readonly stage: CallStages[StageName] }[]

  constructor(
    private readonly parts: CallStages,
    /** What the caller's voice says about their turn (final pitch, their pauses): the end-of-turn rules' second input. */
    readonly cues: VoiceCues,
    /** Keys heard as tones in the caller's audio (a line with no `dtmf` messages of its own). */
    private readonly keypad: KeypadListener | null,
    private readonly key: (digit: string) => void,
  ) {
    this.stages = ORDER.map((name) => ({ name, stage: parts[name] }))
  }

  /** The stage of that name, as its own type. */
  stage<N extends StageName>(name: N): CallStages[N] {
    return this.parts[name]
  }

  /**
   * The interruption signal to every stage, from the line back: the echo reference and the
   * playout first, so the line goes quiet before anything else is done and the agent reads what
   * the playout's clear confirmed heard.
   */
  interrupt(signal: Interruption): void {
    for (let i = this.stages.length - 1; i >= 0; i--) this.stages[i]!.stage.interrupted(signal)
  }

  /** The stages' names, in order. */
  get names(): StageName[] {
    return this.stages.map((s) => s.name)
  }

  /**
   * A frame from the line: audio to the caller's stages (keys heard as tones are keys, and no
   * speech: the VAD and the speech-to-text hear silence in their place), a mark to the playout
   * (the caller heard the audio before it), a key to the chart.
   */
  push(frame: InboundFrame): void {
    if (frame.kind === 'audio') {
      const { keypad } = this
      if (keypad) for (const digit of keypad.push(frame.pcm, frame.sampleRate)) this.key(digit)
      this.parts.callerAudio.push({ kind: 'audio', pcm: frame.pcm, sampleRate: frame.sampleRate, keyTone: keypad?.toneNow ?? false, streamMs: frame.timestamp })
    } else if (frame.kind === 'mark') this.parts.playout.echo(frame.name)
    else if (frame.kind === 'dtmf') this.key(frame.digit)
  }
}

/** Builds the call's stages and links them: what feeds what, and what each tells the chart's side. */
export function buildCallPipeline(parts: SessionParts, chart: ChartSide, clock: PipelineClock): CallPipeline {
  const { line } = parts
  const over = () => chart.over()
  const warn = (message: string, err: unknown) => line.log('warn', message, { err: String(err) })
  /** The agent's audio as the line plays it: what may echo back in the caller's (the barge-in rule's echo row). */
  const echo = new AgentEcho(clock.now)
  const cues = new VoiceCues()
  const playout: Playout = new Playout((f) => parts.send(f), {
    rate: PHONE_RATE,
    chunkMs: parts.chunkMs ?? CHUNK_MS,
    now: clock.now,
    timers: clock.timers,
    onFirstSent: (id, at) => {
      const turn = agent.current(id)
      if (!turn) return
      if (turn.latency) turn.latency.firstAudioSentAt = at
      chart.replySent()
    },
    onFirstHeard: (id, at) => {
      const turn = agent.current(id)
      if (turn?.latency) turn.latency.firstMarkEchoedAt = at
    },
    onHeard: (id, heard) => line.agentHearing?.(heard, id),
    // What went to the line: the recording's agent side, and the echo reference (a stop's or an
    // end's clear reaches the echo as the signal; the clear after a pause's sentence, as a frame).
    onSent: (f, playsAt) => {
      if (f.kind === 'audio') parts.record?.fromAgent(f.pcm, f.sampleRate)
      if (f.kind === 'audio') echo.played(f.pcm, f.sampleRate, playsAt ?? clock.now())
      else if (f.kind === 'clear') echo.cut(clock.now())
    },
  })
  const textToSpeech = new AgentVoice({ line, tts: parts.tts, playout, now: clock.now, phrases: parts.phrases, ttsFailed: (err) => chart.ttsFailed(err) })
  const agent: AgentTurns = new AgentTurns({ line, voice: textToSpeech, playout, over, played: (turn) => chart.played(turn), stopped: (unheard) => chart.agentStopped(unheard) })
  const speechToText = new CallerWords(
    parts.stt,
    (heard, stable) => chart.heard(heard, stable),
    warn,
    (event) => chart.turn?.(event),
  )
  const callerAudio = new CallerAudio({
    vad: parts.vad,
    // The agent's own echo opens no utterance for the speech-to-text engine (a decoder and its
    // CPU on every speakerphone call); the caller's voice over it does, with the audio just before.
    next: { push: (f) => void ((f.kind === 'speech' && isEcho(f.window)) || speechToText.push(f)) },
    record: parts.record,
    now: clock.now,
    over,
    started: (onset) => chart.speechStarted(onset),
    goesOn: (onset) => chart.speechGoesOn(onset),
    agentLevel: (from, to) => echo.loudest(from, to),
    paused: (at) => chart.speechPaused(at),
    judged: (pcm, rate, windows) => cues.push(pcm, rate, windows),
    caughtUp: (at) => parts.stream?.judged(at),
    warn,
  })
  const keypad = line.hearsKeypadTones ? new KeypadListener() : null
  return new CallPipeline({ callerAudio, speechToText, agent, textToSpeech, playout, agentEcho: echo }, cues, keypad, (digit) => chart.key(digit))
}
