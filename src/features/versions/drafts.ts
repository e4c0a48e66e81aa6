/**
 * The draft as a snapshot: the agent document as it is now plus the ids of its knowledge
 * documents, captured in the shape versions freeze, so the draft and any version compare field by
 * field and panel by panel.
 */
import type { PageAfter } from '../../store/port'
import type { AgentDoc } from '../agents/public'
import { type AgentSnapshot, captureSnapshot } from './snapshot'

/** What the draft reader needs of the agents feature. */
export interface AgentReader {
  get(workspaceId: string, id: string): Promise<AgentDoc>
}

/** What it needs of the knowledge feature (KnowledgeService fits). */
export interface KnowledgeLister {
  list(workspaceId: string, agentId: string, page: { limit: number; after?: PageAfter | null }): Promise<{ items: { id: string }[]; next: PageAfter | null }>
}

// Knowledge documents are read 100 at a time: one store query for nearly every agent.
const KNOWLEDGE_PAGE = 100

export interface Draft {
  agent: AgentDoc
  snapshot: AgentSnapshot
}

export class DraftReader {
  constructor(
    private readonly agents: AgentReader,
    private readonly knowledge: KnowledgeLister,
  ) {}

  /** The agent (404 when not in the workspace) and its draft snapshot. */
  async capture(workspaceId: string, agentId: string): Promise<Draft> {
    const agent = await this.agents.get(workspaceId, agentId)
    return { agent, snapshot: captureSnapshot(agent, await this.knowledgeIds(workspaceId, agentId)) }
  }

  /** The snapshot of an agent document already in hand. */
  async snapshotOf(agent: AgentDoc): Promise<AgentSnapshot> {
    return captureSnapshot(agent, await this.knowledgeIds(agent.workspaceId, agent.id))
  }

  private async knowledgeIds(workspaceId: string, agentId: string): Promise<string[]> {
    const ids: string[] = []
    let after: PageAfter | null = null
    do {
      const page: { items: { id: string }[]; next: PageAfter | null } = await this.knowledge.list(workspaceId, agentId, { limit: KNOWLEDGE_PAGE, after })
      ids.push(...page.items.map((d) => d.id))
      after = page.next
    } while (after)
    return ids
  }
}
