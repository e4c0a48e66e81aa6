/**
 * Erasing a customer workspace's data 30 days after its delete (docs/spec.md "Customer workspace":
 * "every conversation, contact, recording and file is erased"), the part the customer feature
 * owns; the rest is each feature's own `onErased` clean-up (registered when it is built, run by
 * lifecycle-effects.ts right after this):
 * 1. its agents, one by one through AgentService.remove, so every agent-delete cascade runs
 *    (conversations and messages, knowledge, phone-number assignments, webhooks, versions, …);
 * 2. the workspace's recorded events (the kernel's event log: their payloads carry names, emails
 *    and phones).
 *
 * Kept on purpose: the usage ledger (`usage_records`). Those records are the developer's billing
 * history (kind, quantity, cost: nothing the customer said), and the developer's past spend must
 * not change because a customer was erased.
 *
 * Every step is a delete by id or by workspace: running it twice erases nothing twice.
 */

import { eventsSpec } from '../../events/bus'
import { isRefused } from '../../refusals'
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, type WorkspaceDoc } from '../../store/workspace-scoped'
import type { AgentService } from '../agents/public'

/** Swept by `workspaceId` after the agents: what no feature owns (the kernel's event log). */
export const ERASED_COLLECTIONS: readonly CollectionSpec[] = [eventsSpec]

// Agents are removed a page at a time: a workspace holds at most its plan's allowance (1,000 on
// enterprise), so 100 a page keeps each read small and the loop short.
const AGENT_PAGE = 100

export class CustomerErasure {
  constructor(
    private readonly store: DocumentStore,
    private readonly agents: AgentService,
  ) {}

  /** Erases everything the workspace holds except its workspace document (the caller removes it last). */
  async erase(workspaceId: string): Promise<{ agents: number; documents: Record<string, number> }> {
    let agents = 0
    for (;;) {
      const page = await this.agents.list(workspaceId, AGENT_PAGE, null)
      if (page.length === 0) break
      let removed = 0
      for (const agent of page) {
        try {
          await this.agents.remove(workspaceId, agent.id)
          removed++
        } catch (err) {
          // Removed meanwhile (a concurrent delete): fine.
          if (!isRefused(err, 'not_found')) throw err
        }
      }
      // A page that will not go away would loop forever: fail the effect (it is retried) instead.
      if (removed === 0) throw new Error(`agents of ${workspaceId} could not be removed`)
      agents += removed
    }
    const documents: Record<string, number> = {}
    for (const spec of ERASED_COLLECTIONS) {
      const collection = new WorkspaceCollection(await this.store.collection<WorkspaceDoc>(spec))
      documents[spec.name] = await collection.in(workspaceId).deleteMany()
    }
    return { agents, documents }
  }
}
