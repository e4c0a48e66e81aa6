/** Frozen agent versions (legacy surface), numbered per agent. */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import type { AgentSnapshot } from './snapshot'

export const ENVIRONMENTS = ['development', 'staging', 'production'] as const
export type Environment = (typeof ENVIRONMENTS)[number]

export interface VersionDoc {
  [field: string]: unknown
  /** `${agentId}:${number}`: the store id. The legacy integer `id` is `number`. */
  id: string
  agentId: string
  workspaceId: string
  number: number
  label: string
  name: string
  environment: Environment
  kind: 'publish' | 'checkpoint' | 'backup'
  createdBy: string
  changeSummary: string | null
  snapshot: AgentSnapshot
  createdAt: string
}

export const versionsSpec: CollectionSpec = {
  name: 'agent_versions',
  indexes: [
    { name: 'agent_number', fields: [['agentId', 1], ['number', -1]], unique: true },
    { name: 'agent_created', fields: [['agentId', 1], ['createdAt', -1], ['id', -1]] },
  ],
}

export type VersionRepo = Collection<VersionDoc>
export const openVersions = (store: DocumentStore): Promise<VersionRepo> => store.collection<VersionDoc>(versionsSpec)
