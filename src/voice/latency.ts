/**
 * Per-turn latency of the voice pipeline, all on the process's monotonic clock (ms): from the end
 * of the caller's speech to the first agent audio sent (server side) and to the echo of its first
 * mark (what the caller experienced), with each stage's share.
 */
export interface TurnLatency {
  turn: number
  /** The last speech window of the caller's utterance ended. */
  speechEndAt: number
  /** Endpointing decided the utterance was over (speech end + the silence threshold). */
  endpointedAt: number
  sttFinalAt: number
  /** Of the STT's time, the wait for a free decoder (engines with a shared pool; 0 or absent otherwise). */
  sttQueueMs?: number
  llmFirstTokenAt: number | null
  ttsFirstByteAt: number | null
  firstAudioSentAt: number | null
  firstMarkEchoedAt: number | null
}

/** The stages of one turn in ms (null where the stage did not happen). */
export interface TurnStages {
  endpointingMs: number
  sttMs: number
  /** The utterance's wait for a free speech decoder; null when the engine has none to wait for. */
  sttQueueMs: number | null
  llmFirstTokenMs: number | null
  ttsFirstByteMs: number | null
  toFirstAudioMs: number | null
  toFirstHeardMs: number | null
}

const span = (from: number, to: number | null): number | null => (to === null ? null : Math.max(0, Math.round(to - from)))

export function stagesOf(t: TurnLatency): TurnStages {
  return {
    endpointingMs: Math.round(t.endpointedAt - t.speechEndAt),
    sttMs: Math.max(0, Math.round(t.sttFinalAt - t.endpointedAt)),
    sttQueueMs: t.sttQueueMs === undefined ? null : Math.round(t.sttQueueMs),
    llmFirstTokenMs: span(t.sttFinalAt, t.llmFirstTokenAt),
    ttsFirstByteMs: t.llmFirstTokenAt === null ? null : span(t.llmFirstTokenAt, t.ttsFirstByteAt),
    toFirstAudioMs: span(t.speechEndAt, t.firstAudioSentAt),
    toFirstHeardMs: span(t.speechEndAt, t.firstMarkEchoedAt),
  }
}

export interface Spread {
  p50: number
  p95: number
  max: number
}

function spread(values: number[]): Spread | null {
  if (!values.length) return null
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
  return { p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1]! }
}

/** GET /calls/{id}'s `latency`: p50/p95/max of each stage over the call's turns. */
export function summariseLatency(turns: TurnStages[]): Record<keyof TurnStages, Spread | null> & { turns: number } {
  // Turns stored before a stage existed lack it.
  const of = (k: keyof TurnStages) => spread(turns.map((t) => t[k]).filter((v): v is number => typeof v === 'number'))
  return {
    turns: turns.length,
    endpointingMs: of('endpointingMs'),
    sttMs: of('sttMs'),
    sttQueueMs: of('sttQueueMs'),
    llmFirstTokenMs: of('llmFirstTokenMs'),
    ttsFirstByteMs: of('ttsFirstByteMs'),
    toFirstAudioMs: of('toFirstAudioMs'),
    toFirstHeardMs: of('toFirstHeardMs'),
  }
}
