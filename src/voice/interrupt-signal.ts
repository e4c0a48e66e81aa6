/**
 * Interruption as one signal every stage of a call's pipeline handles (Pipecat's InterruptionFrame,
 * a system frame that jumps the queue; LiveKit's audio output `clearBuffer()`, `pause()`,
 * `resume()`). The chart decides when the agent is stopped, held or goes on; the pipeline hands
 * that to every stage at once (`CallPipeline.interrupt`), and each stage does its own part:
 *
 *   | signal | why                                        | the playout                  | the agent                                  |
 *   |--------|--------------------------------------------|------------------------------|--------------------------------------------|
 *   | stop   | the caller spoke over the agent (barge-in) | `clear`: the line drops what | cancels its reply, tells the chart what    |
 *   |        |                                            | it buffered, the queue goes  | the caller had not heard of it             |
 *   | pause  | the call is being handed off               | the sentence heard plays out,| starts no answer until `resume`, ends its  |
 *   |        |                                            | nothing after it             | reply once that sentence has played        |
 *   | resume | a false interruption, or no hand-off       | —                            | says the rest of the sentence (`rest`), or |
 *   |        |                                            |                              | lets held answers go                       |
 *   | end    | the call ends on a goodbye (nobody spoke   | `clear` if it still speaks   | nothing: the session says the goodbye, and |
 *   |        | over the agent: no barge-in is reported)   |                              | the chart hears of no stop                 |
 *
 * The echo reference (turn-cues/agent-echo.ts) sits on the line's side of the playout: a stop or
 * an end cuts it where the line's audio was dropped, so the caller's audio after it is not taken
 * for the agent's echo.
 *
 * The caller's stages (audio, speech-to-text) and the text-to-speech take it too: what they do
 * is nothing (the caller's speech goes on being heard; synthesis follows its turn's cancel).
 * A stop reaches the stages from the line back, the playout first: the caller's ear is where an
 * interruption is late, and the agent reads what the playout's clear confirmed was heard.
 */

export type Interruption =
  /** Drop the agent's audio now. */
  | { kind: 'stop' }
  /** Finish the sentence the caller hears; start nothing after it. */
  | { kind: 'pause' }
  /** The call ends: drop the agent's audio for the goodbye, reporting no barge-in. */
  | { kind: 'end' }
  /** Go on: `rest` is what a stop left unsaid of the sentence (said again), null after a pause (held answers go). */
  | { kind: 'resume'; rest: string | null }

/** A stage of the call's pipeline: it takes the interruption signal. */
export interface Interruptible {
  interrupted(signal: Interruption): void
}
