/**
 * Workspaces: a developer's own workspace (`ws_…`) and its customer workspaces (`org_…`), one
 * collection, because a customer workspace is a workspace in every way (agents, numbers,
 * contacts live under its id) with a parent that is billed.
 */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import type { PlanId } from '../../catalog/plans'

export type MetadataValue = string | number | boolean

export interface WorkspaceDoc {
  [field: string]: unknown
  id: string
  kind: 'developer' | 'customer'
  /** The developer workspace of a customer; null for a developer workspace. */
  parentId: string | null
  name: string
  /** Plan, currency and white label belong to the developer; customers inherit them. */
  plan: PlanId
  currency: 'INR' | 'USD'
  timezone: string
  whiteLabel: boolean
  /** Set by the first customer (SPEC.md Authentication rule 6). */
  developer: boolean
  externalId: string | null
  metadata: Record<string, MetadataValue>
  allottedCallLines: number | null
  status: 'active' | 'deleted'
  archivedAt: string | null
  eraseAfter: string | null
  createdAt: string
  updatedAt: string
}

export const workspacesSpec: CollectionSpec = {
  name: 'workspaces',
  indexes: [
    { name: 'parent_created', fields: [['parentId', 1], ['createdAt', -1], ['id', -1]] },
    { name: 'parent_external', fields: [['parentId', 1], ['externalId', 1]], unique: true, sparse: true },
    // The customers list filters by status (archived or not) newest first: one index serves both.
    { name: 'parent_status_created', fields: [['parentId', 1], ['status', 1], ['createdAt', -1], ['id', -1]] },
  ],
}

export type WorkspaceRepo = Collection<WorkspaceDoc>

export const openWorkspaces = (store: DocumentStore): Promise<WorkspaceRepo> => store.collection<WorkspaceDoc>(workspacesSpec)

/** A workspace document with the defaults every new one has; callers give what differs. */
export function newWorkspaceDoc(
  fields: Pick<WorkspaceDoc, 'id' | 'kind' | 'parentId' | 'name' | 'plan' | 'currency' | 'timezone' | 'whiteLabel'> & Partial<WorkspaceDoc>,
  now: string,
): WorkspaceDoc {
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
