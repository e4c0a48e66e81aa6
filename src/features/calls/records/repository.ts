/**
 * Call rows as stored: one document per try (docs/spec.md: "A call with `retry` yields one row ... per
 * try under the same id"), carrying what the request said so a row answers GET and the list alone.
 * The call actor (control/actor.ts) owns the status; rows are its projection, written after each move.
 */
import type { CallState, Hangup } from '../../../../machines/call'
import type { Collection, CollectionSpec, DocumentStore } from '../../../store/port'
import { type ScopedCollection, WorkspaceCollection } from '../../../store/workspace-scoped'
import type { RecordingTimeline, VoiceDials } from '../../../voice/public'
import type { TranscriptLine } from '../analysis/analysis'
import type { FieldSpec, FieldValue } from '../analysis/field-values'
import type { CallSurface } from './totals'

export type MetadataValue = string | number | boolean

export interface CallTransferRow {
  to: string
  phoneNumber: string
  mode: 'cold' | 'warm'
  by: 'agent' | 'api'
  requestedAt: string
  startedAt: string | null
  answeredAt: string | null
  endedAt: string | null
  outcome: 'answered' | 'no_answer' | 'busy' | 'declined' | 'failed' | null
  seconds: number
  error: string | null
}

export interface CallSimulation {
  runId: string
  /** The agent the call talks as: its draft, or a version number. */
  target: 'draft' | number
  /** Whether `call.completed` / `call.analysed` go to the bus (and webhooks) as for a real call. */
  webhooks: boolean
}

export interface CallTryDoc {
  [field: string]: unknown
  /** `<callId>:<attempt>` */
  id: string
  callId: string
  attempt: number
  workspaceId: string
  /** The developer workspace whose call lines and balance the call uses (itself, or the customer's developer). */
  developerId: string
  agentId: string
  agentName: string
  direction: 'outbound' | 'inbound'
  surface: CallSurface
  /** Shown by GET /calls: placed through the API and rung (waiting `sch_` tries and inbound calls are not). */
  listed: boolean
  status: CallState
  phone: string | null
  from: string | null
  callRef: string | null
  reference: string | null
  metadata: Record<string, MetadataValue> | null
  variables: Record<string, MetadataValue>
  purpose: string | null
  /** The call's own `extract`, or null for the agent's collectFields at analysis time. */
  extract: FieldSpec[] | null
  voice: string | null
  conversationId: string | null
  scheduledFor: string | null
  startedAt: string | null
  answeredAt: string | null
  endedAt: string | null
  seconds: number
  hangup: Hangup | null
  summary: string | null
  fields: Record<string, FieldValue>
  transcript: TranscriptLine[]
  recording: { url: string; expiresAt: string; ready: boolean } | null
  /** Where the caller's turns and the agent's speech fall on the recording (a replay cuts the caller's audio by it); absent for a recording finished after a restart. */
  recordingTimeline?: RecordingTimeline
  analysedAt: string | null
  retryScheduledFor: string | null
  error: string | null
  /** The media stream: `live` while the pipeline runs, `done` once transcript and recording are written; absent when none connected. */
  media?: 'live' | 'done'
  /**
   * The media stream's heartbeat: the service-clock instant of the last frame it had received,
   * written when it starts and then every LIVE_BEAT_MS (live/media.ts). A restart that lost the call
   * ends it (and bills it) here.
   */
  liveAt?: string
  /** The instance whose process carries the media stream (its socket and recorder): it dies with it. */
  mediaHost?: string
  /** The agent version the call talked as (set when its media starts); null or absent: it never talked (nothing was published). */
  agentVersion?: number | null
  /** The speech engines the pipeline used, the call length it allowed (the agent's `maxCallSeconds` or the plan's default) and the version's voice dials. */
  pipeline?: { stt: string; tts: string; vad: string; maxCallSeconds?: number; dials?: VoiceDials }
  /** Per-turn latency stages (media/latency.ts); GET answers their p50/p95/max as `latency`. */
  latencyTurns?: import('../../../voice/latency').TurnStages[]
  /** How the caller's speech over the agent ended (resumed, taken, talked over); GET answers it in `latency.overlaps`. */
  overlaps?: import('../../../../machines/voice-turn').OverlapCounts
  /** Pauses the agent talked into (media/talked-into.ts); GET answers it in `latency.overlaps.talkedInto`. */
  talkedInto?: number
  /** The try's transfer (to whom, who asked, when, how it ended): the call actor's, as instants. */
  transfer?: CallTransferRow | null
  /** The transfer's leg is in the ledger (call minutes of its own). */
  transferCharged?: boolean
  /**
   * A simulated call (the simulations feature): it talks as `target` (the draft or a version), is
   * never billed, takes no line, is not listed nor counted in totals, and publishes `call.*` events
   * only when `webhooks` is on.
   */
  simulation?: CallSimulation
  /** What the try cost the developer (call minutes, analysis passes). */
  debitMicro: number
  /** Grouping key for call totals once the try ended (totals.ts); null before. */
  tally: string | null
  /** List order: when the try rang, or when a waiting try was booked. */
  createdAt: string
}

export const callTriesSpec: CollectionSpec = {
  name: 'call_tries',
  indexes: [
    // GET /calls/{id}: the newest try of a call.
    {
      name: 'call_attempt',
      fields: [
        ['callId', 1],
        ['attempt', -1],
      ],
    },
    // GET /calls newest first, and by agent. A `status` or `reference` filter walks the workspace's
    // list in order (no sort) and skips what does not match: each extra index costs every write of a
    // call's life (bench:calls), and those filters narrow lists a person pages through.
    {
      name: 'list',
      fields: [
        ['workspaceId', 1],
        ['listed', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    {
      name: 'list_agent',
      fields: [
        ['workspaceId', 1],
        ['listed', 1],
        ['agentId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    // Call totals: every ended try of the workspace in the window, grouped by tally.
    {
      name: 'totals',
      fields: [
        ['workspaceId', 1],
        ['startedAt', 1],
        ['tally', 1],
      ],
    },
    // Waiting calls to one person (consent withdrawn), a workspace's waiting calls (customer deleted), erasure.
    {
      name: 'workspace_phone',
      fields: [
        ['workspaceId', 1],
        ['phone', 1],
      ],
    },
  ],
}

export type CallTryRepo = Collection<CallTryDoc>

/**
 * One workspace's call tries: what a service does for a workspace (the API's and the console's
 * reads, totals, stopping its waiting calls) goes through this view. An actor's effects, the media
 * path and the boot sweeps name a try by id alone and keep the collection.
 */
export const triesIn = (tries: CallTryRepo, workspaceId: string): ScopedCollection<CallTryDoc> => new WorkspaceCollection(tries).in(workspaceId)

/** The newest try of a call (its actor's current one), read from `tries` (a workspace's view or all). */
export async function newestTry(tries: Pick<CallTryRepo, 'find'> | Pick<ScopedCollection<CallTryDoc>, 'find'>, callId: string): Promise<CallTryDoc | null> {
  const [row] = await tries.find({ callId }, { sort: [['attempt', -1]], limit: 1 })
  return row ?? null
}

export const openCallTries = (store: DocumentStore): Promise<CallTryRepo> => store.collection<CallTryDoc>(callTriesSpec)

export const tryId = (callId: string, attempt: number): string => `${callId}:${attempt}`
