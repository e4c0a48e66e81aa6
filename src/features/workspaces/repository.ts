/**
 * Workspaces: a developer's own workspace (`ws_…`) and its customer workspaces (`org_…`), one
 * collection, because a customer workspace is a workspace in every way (agents, numbers,
 * contacts live under its id) with a parent that is billed.
 */

import type { MetadataValue, WorkspaceDoc } from '../../kernel/tenancy'
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'

export type { MetadataValue, WorkspaceDoc }

export const workspacesSpec: CollectionSpec = {
  name: 'workspaces',
  indexes: [
    {
      name: 'parent_created',
      fields: [
        ['parentId', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    {
      name: 'parent_external',
      fields: [
        ['parentId', 1],
        ['externalId', 1],
      ],
      unique: true,
      sparse: true,
    },
    // The customers list filters by status (archived or not) newest first: one index serves both.
    {
      name: 'parent_status_created',
      fields: [
        ['parentId', 1],
        ['status', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
  ],
}

export type WorkspaceRepo = Collection<WorkspaceDoc>

export const openWorkspaces = (store: DocumentStore): Promise<WorkspaceRepo> => store.collection<WorkspaceDoc>(workspacesSpec)

/** A workspace document with the defaults every new one has; callers give what differs. */
export function newWorkspaceDoc(fields: Pick<WorkspaceDoc, 'id' | 'kind' | 'parentId' | 'name' | 'plan' | 'currency' | 'timezone' | 'whiteLabel'> & Partial<WorkspaceDoc>, now: string): WorkspaceDoc {
  return {
    developer: false,
    externalId: null,
    metadata: {},
    allottedCallLines: null,
    status: 'active',
    archivedAt: null,
    eraseAfter: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  }
}
