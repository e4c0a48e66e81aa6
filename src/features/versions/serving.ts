/**
 * What live conversations talk to (SPEC.md Versioning rule 2: "Only the published snapshot serves
 * live chat and voice"; "an agent starts in draft and cannot be talked to by users until first
 * published").
 *
 * THE SEAM FOR LIVE WEB CHAT AND VOICE: build the agent a live conversation runs with through
 * `servingAgent(workspaceId, agentId)`, never through `AgentService.get` (that is the draft).
 * It answers the agent document with every configurable field taken from the live version's
 * frozen snapshot, and throws 409 when nothing is published (never published, or unpublished).
 * Test chat is the exception on purpose: it exists to try the draft before publishing.
 *
 * What stays live rather than frozen: the agent's id, webKey, phone number and workspace (they
 * identify the agent, they are not configuration) and its knowledge documents, which conversations
 * search as they are now (the snapshot records their ids for diffs).
 */
import { conflict } from '../../http/errors'
import type { AgentDoc } from '../agents'
import type { AgentReader } from './drafts'
import type { VersionDoc, VersionStore } from './repository'
import { agentFieldsOf } from './snapshot'

export interface ServedAgent {
  agent: AgentDoc
  version: VersionDoc
}

export class ServingAgents {
  constructor(
    private readonly agents: AgentReader,
    private readonly versions: VersionStore,
  ) {}

  /** The agent as published: 404 when not in the workspace, 409 when nothing is published. */
  async servingAgent(workspaceId: string, agentId: string): Promise<AgentDoc> {
    return (await this.served(workspaceId, agentId)).agent
  }

  /** The same, with the version it comes from (for logs and conversation records). */
  async served(workspaceId: string, agentId: string): Promise<ServedAgent> {
    const draft = await this.agents.get(workspaceId, agentId)
    const version = await this.versions.live(agentId)
    if (!version || version.workspaceId !== workspaceId) {
      throw conflict(
        `agent ${agentId} is not published (state: draft): live chat and voice serve only a published version; publish it with POST /agents/${agentId}/publish`,
        { state: 'draft' },
      )
    }
    return { agent: { ...draft, ...structuredClone(agentFieldsOf(version.snapshot)) }, version }
  }
}
