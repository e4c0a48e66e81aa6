/**
 * A calling campaign's target (kind `voice`): each recipient is called through the calls feature
 * (its placing rules, its line and rate ceilings, the call actor), with the campaign's purpose.
 * Campaign calls hold at most half of each line set they draw on (the developer's lines, and a
 * customer's `allottedCallLines`), across every campaign this process runs, and place at most half
 * the plan's calls a minute, so calls placed through the API always find a free line and room. A line is held from placing until the call's `call.analysed`.
 */

import { CALL_CEILINGS, RATE_WINDOW_MS } from '../../catalog/limits'
import { type Clock, iso } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { CoordinationUnavailable } from '../../coordination/unavailable'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { isRefused } from '../../refusals'
import type { Collection } from '../../store/port'
import { type CallService, developerOf, lineSets } from '../calls/public'
import type { CampaignOutcomes } from './outcomes'
import type { CampaignDoc, RecipientDoc } from './repository'
import { type Target, Unpaid } from './sender'

/** Every campaign line busy, the calls-a-minute ceiling reached (429), the instance at capacity (503), or coordination not answering: calls last minutes, so look again in a second. */
const LINES_BUSY_WAIT_MS = 1_000
/**
 * A placed call whose end never reaches us (another instance took its actor) frees its campaign line
 * after the longest call there can be: maxCallSeconds' 1,200 s plus two minutes of ringing, as the
 * calls feature's own line TTL.
 */
const CALL_END_WAIT_MS = (1_200 + 120) * 1_000

/** Ends remembered for calls whose campaign is not waiting yet: far more than the lines any plan has (1,000). */
const ENDED_EARLY_MAX = 10_000

/** Campaign calls in progress per line set, in this process; and the calls a campaign waits to end. */
export class CampaignLines {
  private readonly held = new Map<string, number>()
  private readonly freed: (() => void)[] = []
  private readonly ends = new Map<string, () => void>()
  private readonly endedEarly = new Set<string>()

  /** Waits until every set has a campaign line free (its share: half its capacity), then holds one in each. */
  async take(sets: { set: string; share: number }[]): Promise<() => void> {
    while (sets.some((s) => (this.held.get(s.set) ?? 0) >= s.share)) await new Promise<void>((resolve) => this.freed.push(resolve))
    for (const s of sets) this.held.set(s.set, (this.held.get(s.set) ?? 0) + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      for (const s of sets) this.held.set(s.set, (this.held.get(s.set) ?? 1) - 1)
      for (const wake of this.freed.splice(0)) wake()
    }
  }

  /** A campaign call ended (its `call.analysed`). */
  ended(callId: string): void {
    const wake = this.ends.get(callId)
    if (!wake) {
      this.endedEarly.add(callId)
      // Calls nobody waits for (refused at placing, or another instance's) must not pile up.
      if (this.endedEarly.size > ENDED_EARLY_MAX) this.endedEarly.delete(this.endedEarly.values().next().value!)
      return
    }
    this.ends.delete(callId)
    wake()
  }

  /** Resolves when the call ends (or after CALL_END_WAIT_MS). */
  untilEnded(callId: string): Promise<void> {
    if (this.endedEarly.delete(callId)) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ends.delete(callId)
        resolve()
      }, CALL_END_WAIT_MS)
      timer.unref?.()
      this.ends.set(callId, () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

export interface CallingDeps {
  recipients: Collection<RecipientDoc>
  coordination: Coordination
  calls: () => CallService
  lines: CampaignLines
  outcomes: CampaignOutcomes
  clock: Clock
}

/** The campaign's share of each line set its calls use; a set too small to share (one line) cannot carry a campaign. */
export function campaignLineShares(workspace: WorkspaceDoc): { set: string; share: number; capacity: number }[] {
  return lineSets(workspace).map((s) => ({ ...s, share: Math.floor(s.capacity / 2) }))
}

export function tooFewLines(workspace: WorkspaceDoc): string | null {
  const small = campaignLineShares(workspace).find((s) => s.share < 1)
  return small ? `a calling campaign needs at least 2 call lines (it uses at most half, so calls placed through the API always find one); this workspace has ${small.capacity}` : null
}

export function callingTarget(d: CallingDeps, campaign: CampaignDoc, workspace: WorkspaceDoc): Target | string {
  const few = tooFewLines(workspace)
  if (few) return few
  const shares = campaignLineShares(workspace)
  const setRow = (r: RecipientDoc, fields: Partial<RecipientDoc>) => d.outcomes.write(r.id, () => d.recipients.update(r.id, fields))
  return {
    window: Math.min(...shares.map((s) => s.share)),
    // Half the plan's calls a minute too (as with lines, the rest stay for the API), then a line;
    // both before the recipient is claimed, so a pause still applies while they are used up.
    // Coordination not answering (CoordinationUnavailable: Redis down, or slower than its bound on a
    // loaded host) is waited out the same way: nothing was claimed yet, and failing the whole
    // campaign for one late answer would leave every recipient after it unreached.
    pace: async () => {
      const perMinute = Math.max(1, Math.floor(CALL_CEILINGS[workspace.plan].perMinute / 2))
      const hit = () =>
        d.coordination.rateHit(`campaign-calls:${developerOf(workspace)}`, perMinute, RATE_WINDOW_MS, d.clock.now()).then(
          (r) => r.allowed,
          (err: unknown) => {
            if (err instanceof CoordinationUnavailable) return false
            throw err
          },
        )
      while (!(await hit())) await Bun.sleep(LINES_BUSY_WAIT_MS)
      return d.lines.take(shares)
    },
    async hand(r: RecipientDoc, _contact, free) {
      let placed: Awaited<ReturnType<CallService['place']>>
      try {
        placed = await d.calls().place(workspace, { to: r.phone, purpose: campaign.purpose!, agent: campaign.agentId, reference: campaign.id, metadata: { campaign: campaign.id } })
      } catch (err) {
        free()
        // Why the service refused (POST /calls answers the same refusal); anything else is a failure.
        const reason = isRefused(err) ? err.reason : null
        // Too many (lines or calls a minute used up) or unavailable (this instance is at capacity):
        // nothing was placed, the recipient waits for the next try.
        if (reason === 'too_many' || reason === 'unavailable') {
          await setRow(r, { status: 'pending' })
          await new Promise((resolve) => setTimeout(resolve, LINES_BUSY_WAIT_MS))
          return 'retry'
        }
        const callId = isRefused(err) ? (err.details?.id as string | undefined) : undefined
        await setRow(r, { status: reason === 'forbidden' ? 'skipped' : 'failed', error: (err as Error).message, ...(callId ? { callId } : {}) })
        // Not covered: the account cannot pay a first minute; no later recipient could be called either.
        if (reason === 'not_covered') return new Unpaid((err as Error).message)
        return reason === 'forbidden' ? 'skipped' : 'refused'
      }
      const ended = d.lines.untilEnded(placed.id)
      // The call's outcome may be recorded already (outcomes.ts): only a row still `sending` moves.
      await d.outcomes.write(r.id, async () => {
        const row = await d.recipients.get(r.id)
        if (row?.status === 'sending') await d.recipients.update(r.id, { status: 'sent', callId: placed.id, sentAt: iso(d.clock.now()) })
        else await d.recipients.update(r.id, { callId: placed.id, sentAt: iso(d.clock.now()) })
      })
      await ended
      free()
      return 'handed'
    },
    // Calls an earlier run placed (before a crash, or on an instance that died) end on their own,
    // or as dropped once their instance is found gone: the campaign is sent once they are analysed
    // too (their outcome moves the row).
    async settled() {
      const deadline = Date.now() + CALL_END_WAIT_MS
      while (Date.now() < deadline && (await d.calls().unanalysed(workspace.id, campaign.id)) > 0) await Bun.sleep(LINES_BUSY_WAIT_MS)
    },
  }
}
