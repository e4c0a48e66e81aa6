/** What other features may use of calls: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { SandboxScripts } from '../../providers/stt/sandbox'
import type { SandboxNetwork } from '../../providers/telephony/sandbox'
import type { AgentDoc } from '../agents/public'
import type { CallTransfers } from './control/transfers'
import type { CallFeed } from './live/live-feed'
import type { CallMedia } from './live/media'
import type { RefusalCounts } from './placing/refusal-counts'
import type { CallerRecordings } from './records/caller-recording'
import type { CallReads } from './records/console-reads'
import type { CallService } from './service'

/** The widget's call button: a web call answered by `agent`, and where its browser streams (the media bridge). */
export interface WebCalls {
  start(workspace: WorkspaceDoc, agent: AgentDoc): Promise<{ callId: string; mediaPath: string }>
}

export interface CallsServices {
  calls: CallService
  sandbox: SandboxNetwork
  media: CallMedia
  scripts: SandboxScripts
  webCalls: WebCalls
  /** Call updates as they happen (rows, pipeline state, chart state), on every instance. */
  feed: CallFeed
  /** The console's reads of calls (inbound ones too) and ending a call from the console. */
  reads: CallReads
  /** Transferring a live call (POST /calls/{id}/transfer, the console's button, the agent's tool). */
  transfers: CallTransfers
  /** Calls refused at capacity, counted per workspace and hour (the Quality page's). */
  refusals: RefusalCounts
  /** A call's caller as a replay plays it: the caller's side of its kept recording, or why it is gone. */
  callerRecordings: CallerRecordings
}

export const callsRef = featureRef<CallsServices>('calls')

export { analyseCall } from './analysis/analysis'
export type { TranscriptLine } from './analysis/analysis-types'
export type { FieldSpec, FieldType } from './analysis/field-values'
export type { CallTransfers } from './control/transfers'
export { CALL_UPDATES_CHANNEL, type CallFeed, type CallUpdate } from './live/live-feed'
export { PURPOSE_MAX } from './model'
export { developerOf, lineSets } from './placing/lines'
export type { CallerAudio, CallerRecordings } from './records/caller-recording'
export { type CallReads, type ConsoleCall, type ConsoleCallFilter, LIVE_STATUSES, presentConsoleCall } from './records/console-reads'
export { type CallQuality, QUALITY_WINDOWS, type QualityWindow } from './records/quality'
export type { CallSimulation, CallTryDoc } from './records/repository'
export type { CallService, SimulatedCaller } from './service'
