/** API keys: stored as a SHA-256 hash of the value; the value is shown once, on creation. */

import type { ApiKeyDoc } from '../../kernel/tenancy'
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

export { SCOPES, type Scope } from '../../http/authenticator'
export type { ApiKeyDoc }

export const apiKeysSpec: CollectionSpec = {
  name: 'api_keys',
  indexes: [
    { name: 'hash', fields: [['hash', 1]], unique: true },
    {
      name: 'workspace_created',
      fields: [
        ['workspaceId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
  ],
}

export type ApiKeyRepo = Collection<ApiKeyDoc>
export const openApiKeys = (store: DocumentStore): Promise<ApiKeyRepo> => store.collection<ApiKeyDoc>(apiKeysSpec)
