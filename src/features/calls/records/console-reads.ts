/**
 * The console's view of calls: every try of a workspace (inbound ones too, which GET /calls leaves
 * out), filtered; one call with what an operator looks at beside the public form (its conversation,
 * surface, media and pipeline, per-turn latency); and ending a live call from the console.
 */

import type { Clock } from '../../../clock'
import { clashes, notThere } from '../../../refusals'
import type { PageAfter } from '../../../store/port'
import type { ScopedFilter } from '../../../store/workspace-scoped'
import type { TurnStages, VoiceDials } from '../../../voice/public'
import type { CallActors } from '../control/actor'
import type { Call } from '../model'
import type { RefusalCounts } from '../placing/refusal-counts'
import { presentCall } from './present'
import { type CallQuality, callQuality, QUALITY_MAX_CALLS, QUALITY_WINDOWS, type QualityWindow } from './quality'
import { type CallTryDoc, type CallTryRepo, newestTry, triesIn } from './repository'

export const LIVE_STATUSES = ['created', 'ringing', 'connected'] as const

export interface ConsoleCallFilter {
  status?: string
  /** `live`: created, ringing or connected. */
  live?: boolean
  direction?: 'inbound' | 'outbound'
  agent?: string
  phone?: string
  since?: string
  until?: string
  /** true: simulated calls only; false: real ones only. */
  simulated?: boolean
}

export type ConsoleCall = Call & {
  tryId: string
  surface: string
  conversationId: string | null
  media: 'live' | 'done' | null
  pipeline: { stt: string; tts: string; vad: string; maxCallSeconds?: number; dials?: VoiceDials } | null
  latencyTurns: TurnStages[]
  /** The published version the call talked with (fixed when its line connected); null before that. */
  agentVersion: number | null
  /** A simulated call's run and what it talked as (the simulations feature); null for a real call. */
  simulation: { runId: string; target: 'draft' | number } | null
  createdAt: string
}

export function presentConsoleCall(row: CallTryDoc): ConsoleCall {
  return {
    ...presentCall(row),
    tryId: row.id,
    surface: row.surface,
    conversationId: row.conversationId,
    media: row.media ?? null,
    pipeline: row.pipeline ?? null,
    latencyTurns: row.latencyTurns ?? [],
    agentVersion: row.agentVersion ?? null,
    simulation: row.simulation ? { runId: row.simulation.runId, target: row.simulation.target } : null,
    createdAt: row.createdAt,
  }
}

export class CallReads {
  constructor(private readonly deps: { tries: CallTryRepo; clock: Clock; actors: CallActors; refusals?: Pick<RefusalCounts, 'hours'> }) {}

  page(workspaceId: string, q: ConsoleCallFilter, limit: number, after: PageAfter | null): Promise<CallTryDoc[]> {
    const filter: ScopedFilter = {}
    if (q.live) filter.status = { $in: [...LIVE_STATUSES] }
    else if (q.status) filter.status = q.status
    if (q.direction) filter.direction = q.direction
    if (q.agent) filter.agentId = q.agent
    if (q.phone) filter.phone = q.phone
    if (q.simulated !== undefined) filter.simulation = { $exists: q.simulated }
    const range: { $gte?: string; $lt?: string } = {}
    if (q.since) range.$gte = q.since
    if (q.until) range.$lt = q.until
    if (range.$gte || range.$lt) filter.createdAt = range
    return triesIn(this.deps.tries, workspaceId).page(filter, limit, after)
  }

  /** The newest try of a call in this workspace; 404 otherwise. */
  async get(workspaceId: string, callId: string): Promise<CallTryDoc> {
    const row = await newestTry(triesIn(this.deps.tries, workspaceId), callId)
    if (!row) throw notThere(`no call ${callId} in this workspace`)
    return row
  }

  /** The workspace's call quality over the last day or week (quality.ts), real calls only, and its calls refused at capacity. */
  async quality(workspaceId: string, window: QualityWindow): Promise<CallQuality> {
    const now = this.deps.clock.now()
    const { ms, bucketMs } = QUALITY_WINDOWS[window]
    const until = Math.ceil(now / bucketMs) * bucketMs
    const filter: ScopedFilter = { simulation: { $exists: false }, createdAt: { $gte: new Date(until - ms).toISOString(), $lt: new Date(until).toISOString() } }
    const [rows, refused] = await Promise.all([
      triesIn(this.deps.tries, workspaceId).find(filter, { sort: [['createdAt', -1]], limit: QUALITY_MAX_CALLS + 1 }),
      this.deps.refusals?.hours(workspaceId, until - ms, until) ?? [],
    ])
    return callQuality(rows.slice(0, QUALITY_MAX_CALLS), window, now, rows.length > QUALITY_MAX_CALLS, refused)
  }

  newest(callId: string): Promise<CallTryDoc | null> {
    return newestTry(this.deps.tries, callId)
  }

  byTry(tryId: string): Promise<CallTryDoc | null> {
    return this.deps.tries.get(tryId)
  }

  /** Ends a live call (or cancels a waiting one) as DELETE /calls/{id} does, inbound calls included; 409 when it ended already. */
  async end(workspaceId: string, callId: string): Promise<CallTryDoc> {
    await this.get(workspaceId, callId)
    const { actors } = this.deps
    const asked = await actors.ask(callId, { type: 'call.delete', at: this.deps.clock.now() })
    if (!asked.ok) throw clashes(asked.refusal.message, { state: asked.refusal.state })
    await actors.settle(callId)
    return this.get(workspaceId, callId)
  }
}
