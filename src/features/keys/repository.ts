/** API keys: stored as a SHA-256 hash of the value; the value is shown once, on creation. */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

import type { Scope } from '../../http/authenticator'
export { SCOPES, type Scope } from '../../http/authenticator'

export interface ApiKeyDoc {
  [field: string]: unknown
  id: string
  /** The workspace the key opens: the developer's own, or one customer's. */
  workspaceId: string
  /** The developer workspace that owns the key (same as workspaceId for a developer key). */
  developerId: string
  name: string
  prefix: string
  scope: Scope
  hash: string
  lastUsedAt: string | null
  revokedAt: string | null
  createdAt: string
}

export const apiKeysSpec: CollectionSpec = {
  name: 'api_keys',
  indexes: [
    { name: 'hash', fields: [['hash', 1]], unique: true },
    { name: 'workspace_created', fields: [['workspaceId', 1], ['createdAt', -1], ['id', -1]] },
  ],
}

export type ApiKeyRepo = Collection<ApiKeyDoc>
export const openApiKeys = (store: DocumentStore): Promise<ApiKeyRepo> => store.collection<ApiKeyDoc>(apiKeysSpec)
