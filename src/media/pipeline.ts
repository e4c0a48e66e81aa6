/**
 * A call's pipeline as a value (Pipecat's `Pipeline([...])`): its stages, in the order the call's
 * frames go through them, each the part that does the work. The session (session.ts) builds them
 * and composes them here; the serializer before the first stage is the bridge's, chosen by the
 * telephony provider (serializers/index.ts).
 *
 * What crosses from one stage to the next: `InboundFrame`s from the serializer (frames.ts); 16-bit
 * PCM with its rate into the VAD and the speech-to-text engine; speech starts and pauses, and the
 * caller's words, to the turn-taking chart (machines/voice-turn.ts), which decides every turn and
 * tells the agent; the agent's reply as text, streamed in clauses to text-to-speech; PCM at the
 * line's rate to the playout; `OutboundFrame`s to the serializer. The one system frame, `clear`
 * (barge-in), is never queued behind audio: the playout sends it the moment the chart stops the
 * agent. A call's end (`stop`, a lost socket) is handled by the bridge before any queue.
 */
import type { AgentTurns } from './agent-turns'
import type { AgentVoice } from './agent-voice'
import type { CallerAudio } from './caller-audio'
import type { CallerWords } from './caller-words'
import type { Playout } from './playout'

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
}

export type StageName = keyof CallStages

/** The stages' order: the one place it is written. */
const ORDER = ['callerAudio', 'speechToText', 'agent', 'textToSpeech', 'playout'] as const satisfies readonly StageName[]
/** A stage left out of ORDER does not compile. */
const everyStageOrdered: Exclude<StageName, (typeof ORDER)[number]> extends never ? true : never = true
void everyStageOrdered

export class CallPipeline {
  /** The stages in the order frames go through them. */
  readonly stages: readonly { readonly name: StageName; readonly stage: CallStages[StageName] }[]

  constructor(private readonly parts: CallStages) {
    this.stages = ORDER.map((name) => ({ name, stage: parts[name] }))
  }

  /** The stage of that name, as its own type. */
  stage<N extends StageName>(name: N): CallStages[N] {
    return this.parts[name]
  }

  /** The stages' names, in order. */
  get names(): StageName[] {
    return this.stages.map((s) => s.name)
  }
}
