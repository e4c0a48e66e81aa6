/**
 * Erasing a customer workspace's data 30 days after its delete (SPEC.md "Customer workspace":
 * "every conversation, contact, recording and file is erased").
 *
 * What goes, in this order, so a crash at any point leaves a state the next run finishes:
 * 1. its agents, one by one through AgentService.remove, so every agent-delete cascade runs
 *    (conversations and messages, knowledge documents, passages, search log and in-memory index,
 *    phone-number assignments, and whatever later features register there);
 * 2. a sweep by `workspaceId` of every collection that holds its data, children before parents,
 *    for anything no agent owned (messages, conversations, knowledge, contacts, recorded events —
 *    their payloads carry names, emails and phones —, agent versions, phone numbers it was given
 *    after the delete, and its revoked keys).
 * Recordings and files: no feature stores any yet; the feature that does subscribes to
 * `CustomerLifecycleHooks.onErased` and erases its own.
 *
 * Kept on purpose: the usage ledger (`usage_records`). Those records are the developer's billing
 * history (kind, quantity, cost: nothing the customer said), and the developer's past spend must
 * not change because a customer was erased.
 *
 * Every step is a delete by id or by workspace: running it twice erases nothing twice.
 */
import { ApiError } from '../../http/errors'
import { eventsSpec } from '../../events/bus'
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { agentNumbersSpec } from '../agents/agent-numbers'
import type { AgentService } from '../agents/service'
import { contactsSpec } from '../contacts/repository'
import { conversationsSpec, messagesSpec } from '../conversations/repository'
import { apiKeysSpec } from '../keys/repository'
import { DOCUMENTS, PASSAGES, SEARCHES } from '../knowledge/repository'
import { phoneNumbersSpec } from '../phone-numbers/repository'
import { versionsSpec } from '../versions/repository'

/**
 * Swept by `workspaceId`, in this order (messages before their conversation, passages before their
 * document). `agent_versions` has no workspace index: its sweep scans, once per erasure, which is
 * rare enough not to earn an index every version write would pay for.
 */
export const ERASED_COLLECTIONS: readonly CollectionSpec[] = [
  messagesSpec,
  conversationsSpec,
  PASSAGES,
  DOCUMENTS,
  SEARCHES,
  contactsSpec,
  eventsSpec,
  versionsSpec,
  phoneNumbersSpec,
  apiKeysSpec,
  agentNumbersSpec,
]

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
          if (!(err instanceof ApiError && err.status === 404)) throw err
        }
      }
      // A page that will not go away would loop forever: fail the effect (it is retried) instead.
      if (removed === 0) throw new Error(`agents of ${workspaceId} could not be removed`)
      agents += removed
    }
    const documents: Record<string, number> = {}
    for (const spec of ERASED_COLLECTIONS) {
      const collection = await this.store.collection(spec)
      documents[spec.name] = await collection.deleteMany({ workspaceId })
    }
    return { agents, documents }
  }
}
