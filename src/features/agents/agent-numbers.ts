/**
 * Legacy agent numbers: docs/spec.md's legacy surface names agents by integer (`agent_id` on webhook
 * endpoints, the rollback answer), so every agent gets a per-account number, 1, 2, 3…, never
 * reused (store/account-numbers.ts). A claim row stays after its agent is deleted, so the mark only
 * grows; it maps number → agent for legacy paths and requests. Claimed when an agent is created;
 * an agent from before numbers existed gets one the first time the legacy surface needs it (the
 * unique index on `agentId` makes two racing first uses agree on one number).
 */
import { claimNextNumber, type NumberClaimDoc, numberClaimsSpec } from '../../store/account-numbers'
import type { DocumentStore } from '../../store/port'
import { WorkspaceCollection } from '../../store/workspace-scoped'
import type { AgentDoc, AgentRepo } from './repository'

export interface AgentNumberDoc extends NumberClaimDoc {
  agentId: string
}

export const agentNumbersSpec = numberClaimsSpec('legacy_agent_numbers', [{ name: 'agent', fields: [['agentId', 1]], unique: true }])

// Each lost race means another agent of the account took a number first; agents per account are
// at most the plan allowance (1,000 on enterprise), and creates arrive a few at a time, so 50 tries
// outlast any realistic burst.
const CLAIM_TRIES = 50

export class AgentNumbers {
  constructor(
    private readonly claims: WorkspaceCollection<AgentNumberDoc>,
    private readonly agents: AgentRepo,
  ) {}

  static async open(store: DocumentStore, agents: AgentRepo): Promise<AgentNumbers> {
    return new AgentNumbers(new WorkspaceCollection(await store.collection<AgentNumberDoc>(agentNumbersSpec)), agents)
  }

  /** The agent's number, claimed now if it has none yet. */
  async numberOf(agent: Pick<AgentDoc, 'id' | 'workspaceId' | 'legacyNumber'>): Promise<number> {
    if (typeof agent.legacyNumber === 'number') return agent.legacyNumber
    const claims = this.claims.in(agent.workspaceId)
    const held = async () => (await claims.findOne({ agentId: agent.id }))?.number ?? null
    const number = (await held()) ?? (await claimNextNumber(claims, { extra: { agentId: agent.id }, tries: CLAIM_TRIES, onConflict: held }))
    await this.agents.update(agent.id, { legacyNumber: number })
    return number
  }

  /** The number an agent id was given, also after the agent was deleted; null if it never had one. An id is unique across workspaces. */
  async numberOfId(agentId: string): Promise<number | null> {
    return (await this.claims.acrossWorkspaces.findOne({ agentId }))?.number ?? null
  }

  /** The agent id behind number `n` in the account, or null (never held, or its agent is gone). */
  async agentIdOf(workspaceId: string, n: number): Promise<string | null> {
    return (await this.claims.in(workspaceId).findOne({ number: n }))?.agentId ?? null
  }

  /** Erasure: an erased account's claims go with it (nothing in it can be named again). */
  async removeWorkspace(workspaceId: string): Promise<void> {
    await this.claims.in(workspaceId).deleteMany()
  }
}
