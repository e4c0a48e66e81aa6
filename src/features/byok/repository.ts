/** Where BYOK keeps its state: one key per (workspace, job), the on/off switch, agents' choices. */

import type { Job } from '../../providers/catalog'
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

export interface ByokKeyDoc {
  [field: string]: unknown
  /** `<workspaceId>:<job>` */
  id: string
  workspaceId: string
  job: Job
  provider: string
  /** The credentials as JSON, sealed with SECRET_KEY (AES-256-GCM): never stored in the clear. */
  sealed: string
  /** The last four characters of the key: all that is ever shown of it. */
  last4: string | null
  /** The credentials that are not secret (base URL, endpoint, deployment, API version), shown as given. */
  shown: Record<string, string>
  /** What the provider offered this key, as it named them. */
  models: string[]
  model: string | null
  verifiedAt: string
  createdAt: string
  updatedAt: string
}

export interface ByokSwitchDoc {
  [field: string]: unknown
  /** The workspace id (also in workspaceId, so a customer's erasure finds it). */
  id: string
  workspaceId: string
  enabled: boolean
  updatedAt: string
}

export interface ByokChoiceDoc {
  [field: string]: unknown
  /** `<workspaceId>:<agentId>` */
  id: string
  workspaceId: string
  agentId: string
  model: string | null
  voice: string | null
  /** A Realtime model's turn detection; absent: server_vad. */
  turnDetection?: 'server_vad' | 'semantic_vad' | 'service_vad' | null
}

export const byokKeysSpec: CollectionSpec = { name: 'byok_keys', indexes: [{ name: 'workspace', fields: [['workspaceId', 1]] }] }
export const byokSwitchesSpec: CollectionSpec = { name: 'byok_switches', indexes: [] }
export const byokChoicesSpec: CollectionSpec = {
  name: 'byok_choices',
  indexes: [
    {
      name: 'workspace_agent',
      fields: [
        ['workspaceId', 1],
        ['agentId', 1],
      ],
    },
  ],
}

export interface ByokRepos {
  keys: Collection<ByokKeyDoc>
  switches: Collection<ByokSwitchDoc>
  choices: Collection<ByokChoiceDoc>
}

export async function openByok(store: DocumentStore): Promise<ByokRepos> {
  return {
    keys: await store.collection<ByokKeyDoc>(byokKeysSpec),
    switches: await store.collection<ByokSwitchDoc>(byokSwitchesSpec),
    choices: await store.collection<ByokChoiceDoc>(byokChoicesSpec),
  }
}
