/** API keys: stored as a SHA-256 hash of the value; the value is shown once, on creation. */

import type { ApiKeyDoc } from '../../kernel/tenancy'
import type { CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'

export { SCOPES, type Scope } from '../../http/authenticator'
export type { ApiKeyDoc }

export const apiKeysSpec: CollectionSpec = workspaceSpec('api_keys', [{ name: 'hash', fields: [['hash', 1]], unique: true }])

export type ApiKeyRepo = WorkspaceCollection<ApiKeyDoc>
export const openApiKeys = async (store: DocumentStore): Promise<ApiKeyRepo> => new WorkspaceCollection(await store.collection<ApiKeyDoc>(apiKeysSpec))
