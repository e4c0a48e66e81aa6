/**
 * Whether the agent a create is for is gone, asked AFTER the create's insert. The agent was
 * checked before the create's waits (DNS for the target check, the cap check); a delete that ran
 * meanwhile has already swept the agent's webhooks, so the new row would be one nobody can reach.
 *
 * The agent's own row is not enough to ask: AgentService.remove runs every cascade (ours sweeps
 * the webhooks) BEFORE it deletes the agent row, so an insert landing between our sweep and that
 * delete finds the agent still there. So our cascade first marks the agent here, then sweeps. A
 * create reads the mark after its insert: either its read comes after the mark (it backs out), or
 * before it, and then its insert came before the sweep, which takes the row. Either way nothing is
 * left. The agent row is asked too, for deletes that began before marks existed.
 */
import { iso, type Clock } from '../../clock'
import { notFound } from '../../http/errors'
import type { Collection, CollectionSpec } from '../../store/port'
import type { AgentService } from '../agents/service'

export interface RemovedAgentDoc {
  [field: string]: unknown
  /** The agent id (ids are never reused). */
  id: string
  workspaceId: string
  at: string
}

export const removedAgentsSpec: CollectionSpec = {
  name: 'webhook_removed_agents',
  indexes: [{ name: 'at', fields: [['at', 1]] }],
}

// A mark matters until the agent row is gone (agents.get answers 404 from then on) and no create
// that began before the delete is still running: creates take seconds, a day covers both.
export const REMOVED_AGENT_MARK_MS = 24 * 60 * 60 * 1000

export class RemovedAgents {
  constructor(
    private readonly marks: Collection<RemovedAgentDoc>,
    private readonly agents: AgentService,
    private readonly clock: Clock,
  ) {}

  /** Agent delete cascade, before any webhook of the agent is removed. Prunes old marks. */
  async mark(workspaceId: string, agentId: string): Promise<void> {
    const now = this.clock.now()
    await this.marks.upsert({ id: agentId, workspaceId, at: iso(now) })
    await this.marks.deleteMany({ at: { $lt: iso(now - REMOVED_AGENT_MARK_MS) } })
  }

  /** Throws the 404 any request for a missing agent gets when the agent is deleted or being deleted. */
  async assertPresent(workspaceId: string, agentId: string): Promise<void> {
    await this.agents.get(workspaceId, agentId)
    const mark = await this.marks.get(agentId)
    // Worded as AgentService.get's 404: to the caller the agent is simply not there.
    if (mark && mark.workspaceId === workspaceId) throw notFound(`no agent ${agentId} in this workspace`)
  }
}
