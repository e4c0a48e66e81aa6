/**
 * A call's lines (docs/spec.md: calls per minute and concurrent calls): the line sets a workspace's
 * calls hold a slot of, and taking one for a call being placed.
 */
import { CALL_CEILINGS, RATE_WINDOW_MS } from '../../../catalog/limits'
import type { Coordination } from '../../../coordination/port'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import { LINE_TTL_MS, LINES_BUSY_RETRY_SECONDS } from './ceilings'
import { tooManyCalls } from './placement-rules'

/** The developer whose lines and plan a workspace's calls use. */
export const developerOf = (workspace: WorkspaceDoc): string => workspace.parentId ?? workspace.id

/** Line sets: the developer's, and a customer's own share when it has `allottedCallLines`. */
export const lineSets = (workspace: WorkspaceDoc): { set: string; capacity: number }[] => {
  const sets = [{ set: `call-lines:${developerOf(workspace)}`, capacity: CALL_CEILINGS[workspace.plan].lines }]
  if (workspace.kind === 'customer' && workspace.allottedCallLines !== null) sets.push({ set: `call-lines:${workspace.id}`, capacity: workspace.allottedCallLines })
  return sets
}

/** A line for the call (docs/spec.md: calls per minute and concurrent calls, both 429 with Retry-After). */
export async function takeLine(coordination: Coordination, workspace: WorkspaceDoc, callId: string, now: number): Promise<void> {
  const ceilings = CALL_CEILINGS[workspace.plan]
  const rate = await coordination.rateHit(`calls:${developerOf(workspace)}`, ceilings.perMinute, RATE_WINDOW_MS, now)
  if (!rate.allowed) throw tooManyCalls(`at most ${ceilings.perMinute} calls a minute on the ${workspace.plan} plan`, (rate.resetAt - now) / 1000)
  const taken: string[] = []
  for (const { set, capacity } of lineSets(workspace)) {
    const hold = await coordination.acquireSlot(set, callId, capacity, LINE_TTL_MS)
    if (!hold.acquired) {
      for (const t of taken) await coordination.releaseSlot(t, callId)
      const whose = set.endsWith(workspace.id) && workspace.kind === 'customer' ? `this customer's ${capacity} allotted call lines` : `all ${capacity} call lines of the ${workspace.plan} plan`
      throw tooManyCalls(`${whose} are in use; try again when a call ends`, LINES_BUSY_RETRY_SECONDS)
    }
    taken.push(set)
  }
}
