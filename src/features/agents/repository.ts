/** Agents as stored: the public fields plus the workspace they live in. */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import { workspaceSpec } from '../../store/workspace-scoped'
import type { Agent } from './model'

export type StoredVoice = Omit<Agent['voice'], 'surfaces' | 'phoneNumber'>

export interface AgentDoc extends Omit<Agent, 'voice'> {
  [field: string]: unknown
  workspaceId: string
  voice: StoredVoice
  /**
   * The voice number attached in the console, copied here when it is assigned so reading an
   * agent is one store read (the phone-numbers service keeps it in step).
   */
  phoneNumber?: string | null
  /** The legacy surface's integer id for this agent (endpoint-numbers.ts); absent until claimed. */
  legacyNumber?: number
  /** Set when a delete begins, before its cascades (AgentService.remove): the agent reads as gone. */
  deletingAt?: string | null
  /**
   * The version number an agent served from a published version answers with (versions' serving
   * seam sets it, so conversation records can name it); never stored: agents are written only from
   * the draft, which has none.
   */
  servedVersion?: number
  updatedAt: string
}

export const agentsSpec: CollectionSpec = workspaceSpec('agents', [{ name: 'web_key', fields: [['webKey', 1]], unique: true }])

export type AgentRepo = Collection<AgentDoc>
export const openAgents = (store: DocumentStore): Promise<AgentRepo> => store.collection<AgentDoc>(agentsSpec)
