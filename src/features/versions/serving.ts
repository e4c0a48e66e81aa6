/**
 * What live conversations talk to (docs/spec.md Versioning rule 2: "Only the published snapshot serves
 * live chat and voice"; "an agent starts in draft and cannot be talked to by users until first
 * published"). Every channel builds the agent it talks with here — website chat and browser calls,
 * phone calls in and out (and calling campaigns, which place calls), the chat app, the bot app and
 * email — never through `AgentService.get` (that is the draft). Test chat is the exception on
 * purpose: it exists to try the draft before publishing.
 *
 * The answer is the agent document with every configurable field taken from the live version's
 * frozen snapshot. What stays live rather than frozen: the agent's id, webKey, phone number and
 * workspace (they identify the agent, they are not configuration) and its knowledge documents,
 * which conversations search as they are now (the snapshot records their ids for diffs).
 */
import { clashes, isRefused, type Refused } from '../../refusals'
import type { AgentDoc } from '../agents/public'
import type { AgentReader } from './drafts'
import type { VersionDoc, VersionStore } from './repository'
import { agentFieldsOf } from './snapshot'

export interface ServedAgent {
  agent: AgentDoc
  version: VersionDoc
}

/** The refusal (a 409) every channel answers for an agent with nothing published. */
export function notPublished(agentId: string): Refused {
  return clashes(`agent ${agentId} is not published (state: draft): live chat and voice serve only a published version; publish it with POST /agents/${agentId}/publish`, { state: 'draft' })
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

  /**
   * The agent as published, or null when it is gone or nothing of it is published: for work that
   * runs without a request to answer (an inbound message, a call that rings, an analysis).
   */
  async live(workspaceId: string, agentId: string): Promise<AgentDoc | null> {
    return this.served(workspaceId, agentId).then(
      (s) => s.agent,
      (err) => {
        if (isRefused(err, 'not_found') || isRefused(err, 'conflict')) return null
        throw err
      },
    )
  }

  /** The same, with the version it comes from (for logs and conversation records). */
  async served(workspaceId: string, agentId: string): Promise<ServedAgent> {
    const [draft, version] = await Promise.all([this.agents.get(workspaceId, agentId), this.versions.live(workspaceId, agentId)])
    if (!version) throw notPublished(agentId)
    return { agent: asPublished(draft, version), version }
  }

  /**
   * The agent as version `number` froze it, live or not: work that finishes what a version began
   * (a call's analysis, after the agent was republished or unpublished mid-call). Null when the
   * agent or the version is gone.
   */
  async version(workspaceId: string, agentId: string, number: number): Promise<AgentDoc | null> {
    const [draft, version] = await Promise.all([this.agents.get(workspaceId, agentId).catch(() => null), this.versions.get(workspaceId, agentId, number)])
    if (!draft || !version) return null
    return asPublished(draft, version)
  }
}

const asPublished = (draft: AgentDoc, version: VersionDoc): AgentDoc => ({ ...draft, ...structuredClone(agentFieldsOf(version.snapshot)), servedVersion: version.number })
