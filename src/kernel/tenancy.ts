/**
 * Who a request runs as and where: the workspace and API key rows and the principal the HTTP
 * contexts hand every route. The kernel owns these shapes; the tenancy feature
 * (features/workspaces) stores them and implements the authenticator port that yields them
 * (http/authenticator.ts), so neither the kernel nor any feature's routes need that feature.
 */
import type { PlanId } from '../catalog/plans'
import type { Scope } from '../http/authenticator'

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
  /** Set by the first customer (docs/spec.md Authentication rule 6). */
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

/** An API key as stored: a SHA-256 hash of the value; the value is shown once, on creation. */
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

export interface Principal {
  key: ApiKeyDoc
  /** The workspace the key opens. */
  home: WorkspaceDoc
  /** The developer workspace behind it (the home itself for a developer key). */
  developer: WorkspaceDoc
}

/** Finds a workspace by id (null when there is none): how a feature reads one without the tenancy feature. */
export type WorkspaceLookup = (id: string) => Promise<WorkspaceDoc | null>
