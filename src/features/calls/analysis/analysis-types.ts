/** What post-call analysis takes and gives (analysis.ts, and the offline reader in local-analysis.ts). */
import type { Usage } from '../../../providers/llm'
import type { FieldSpec, FieldValue } from './field-values'

export interface TranscriptLine {
  speaker: 'agent' | 'customer' | 'team'
  text: string
  at: string
}

export interface AnalysisRequest {
  transcript: TranscriptLine[]
  direction: 'outbound' | 'inbound'
  agentName: string
  /** The call's spoken purpose (outbound), or null. */
  purpose: string | null
  /** Summaries on for this call (the agent's `voice.summariseCalls`). */
  summarise: boolean
  /** Fields to extract; empty when nobody will read them (docs/spec.md Events rule 7). */
  fields: FieldSpec[]
  signal?: AbortSignal
}

export interface AnalysisResult {
  summary: string | null
  fields: Record<string, FieldValue>
  /** What the model passes cost, for the ledger: one entry per pass that ran. */
  passes: { kind: 'summary' | 'fields'; usage: Usage | null }[]
}
