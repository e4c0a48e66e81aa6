/**
 * The call rows as a projection of the call actor: after each stored change of a call's chart, the
 * row of its current try is brought in step (status, times, hangup, analysis, retry), a new try
 * gets its row (copying what the request said from the first), and a try that ended gets its
 * totals key and frees its line.
 */
import { type CallSnapshot, type CallTransfer, TRANSFER_STATES } from '../../../../machines/call'
import { voiceTier } from '../../../catalog/voices'
import { iso } from '../../../clock'
import type { Coordination } from '../../../coordination/port'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { AgentService } from '../../agents/public'
import type { Meter } from '../../usage/public'
import { lineSets } from '../placing/lines'
import { type CallTransferRow, type CallTryDoc, type CallTryRepo, tryId } from './repository'
import { type CallOutcome, tallyKey } from './totals'

const ENDED = new Set(['completed', 'missed', 'failed', 'cancelled'])
const OUTCOME: Record<string, CallOutcome> = { completed: 'answered', missed: 'missed', failed: 'failed', cancelled: 'cancelled' }
const at = (ms: number | null): string | null => (ms === null ? null : iso(ms))
const LIVE_TRANSFER = new Set<string>(TRANSFER_STATES)

/** The chart's transfer as the row keeps it (instants as ISO strings, the name as `to`). */
export function transferRow(t: CallTransfer | null | undefined): CallTransferRow | null {
  if (!t) return null
  return {
    to: t.name,
    phoneNumber: t.phoneNumber,
    mode: t.mode,
    by: t.by,
    requestedAt: iso(t.requestedAt),
    startedAt: at(t.startedAt),
    answeredAt: at(t.answeredAt),
    endedAt: at(t.endedAt),
    outcome: t.outcome,
    seconds: t.seconds,
    error: t.error,
  }
}

export class CallProjection {
  constructor(
    private readonly deps: {
      tries: CallTryRepo
      coordination: Coordination
      workspace: (id: string) => Promise<WorkspaceDoc | null>
      agents: Pick<AgentService, 'get'>
      meter: Pick<Meter, 'charge'>
      /** The call is over (its last try ended): its voice conversation is closed. */
      callEnded?: (conversationId: string) => Promise<void>
    },
  ) {}

  async project(callId: string, snapshot: CallSnapshot): Promise<void> {
    const c = snapshot.context
    const state = String(snapshot.value)
    const { tries } = this.deps
    const id = tryId(callId, c.attempt)
    let row = await tries.get(id)
    if (!row) {
      const first = await tries.get(tryId(callId, 1))
      if (!first) return // not placed through the API (or erased): nothing to show
      row = { ...first, id, attempt: c.attempt, conversationId: first.conversationId, summary: null, fields: {}, transcript: [], recording: null, debitMicro: 0, tally: null }
      await tries.insert(row)
    }
    // While a retry waits, the newest try is still the missed one (docs/spec.md: `attempt: 1`,
    // `retryScheduledFor` set); a booked call that has not rung is `scheduled`.
    // A transfer's states are live: the call is `connected` to whoever is on it (docs/api/calls.md "Transfer").
    const status = (state === 'scheduled' && c.retryScheduledFor !== null ? 'missed' : LIVE_TRANSFER.has(state) ? 'connected' : state) as CallTryDoc['status']
    const ended = ENDED.has(status)
    const startedAt = at(c.startedAt)
    const set: Partial<CallTryDoc> = {
      status,
      // Browser calls are listed too: the developer sees them nowhere else.
      listed: (row.direction === 'outbound' || row.surface === 'web') && status !== 'scheduled' && !row.simulation,
      callRef: c.callRef,
      scheduledFor: at(c.scheduledFor),
      startedAt,
      answeredAt: at(c.answeredAt),
      endedAt: at(c.endedAt),
      seconds: c.seconds,
      hangup: c.hangup,
      error: c.error,
      analysedAt: at(c.analysedAt),
      retryScheduledFor: at(c.retryScheduledFor),
      tally: ended && c.startedAt !== null && !row.simulation ? tallyKey(c.startedAt, row.direction, OUTCOME[status], row.surface) : null,
      createdAt: startedAt ?? row.createdAt,
    }
    // Only what changed is written, and nothing when nothing did: a call's chart is stored about
    // seven times, and several of those moves (an effect starting) change nothing a row shows.
    const transfer = transferRow(c.transfer)
    const changed: Partial<CallTryDoc> = Object.fromEntries(Object.entries(set).filter(([k, v]) => row[k] !== v))
    if (JSON.stringify(transfer) !== JSON.stringify(row.transfer ?? null)) changed.transfer = transfer
    if (Object.keys(changed).length > 0) await tries.update(id, changed)
    // The line goes back once, when the try ends (later changes of an ended try are its analysis).
    if (ended && !ENDED.has(row.status)) await this.freeLine(row)
    // Not only on the change that ended it: a charge that failed (the projection's error is logged
    // and the next change projects again) is made then; the ledger id keeps it to one record.
    if (ended && c.seconds > 0 && row.minutesCharged !== true && !row.simulation) await this.chargeMinutes(row, c.seconds, c.endedAt)
    // A transfer's leg is a call of its own at the network: its answered seconds are call minutes too, once.
    const leg = c.transfer
    if (ended && leg && leg.seconds > 0 && row.transferCharged !== true && !row.simulation) await this.chargeMinutes(row, leg.seconds, leg.endedAt ?? c.endedAt, 'transfer')
    // The whole call is over (no retry waiting): on every change from then on, not only the first,
    // so a failed write is made on the next (the analysis); closing twice changes nothing.
    if (ENDED.has(state) && row.conversationId) await this.deps.callEnded?.(row.conversationId)
  }

  /**
   * The try's minutes go into the ledger once (its id is the try's), priced by the agent's voice
   * tier when it ended; the row's `debitMicro` mirrors the record.
   */
  private async chargeMinutes(row: CallTryDoc, seconds: number, endedAt: number | null, leg?: 'transfer'): Promise<void> {
    const agent = await this.deps.agents.get(row.workspaceId, row.agentId).catch(() => null)
    const record = await this.deps.meter.charge({
      id: leg ? `use_call_${row.id}_${leg}` : `use_call_${row.id}`,
      workspaceId: row.workspaceId,
      act: { kind: 'call_minute', seconds, tier: voiceTier(agent?.voice.voice ?? null) },
      refs: { callId: row.callId, attempt: row.attempt, agentId: row.agentId, ...(leg ? { leg } : {}) },
      at: endedAt ?? undefined,
    })
    if (!record) return
    // Read again: the other leg's charge may have been written since this row was read.
    const now = (await this.deps.tries.get(row.id)) ?? row
    await this.deps.tries.update(row.id, { debitMicro: (now.debitMicro ?? 0) + record.costMicro, ...(leg ? { transferCharged: true } : { minutesCharged: true }) })
  }

  /** The try ended: its line goes back (a no-op when it held none, as a booked call never rung). */
  private async freeLine(row: CallTryDoc): Promise<void> {
    const workspace = await this.deps.workspace(row.workspaceId)
    if (!workspace) return
    for (const { set } of lineSets(workspace)) await this.deps.coordination.releaseSlot(set, row.callId)
  }
}
