/**
 * What the customer-workspace chart's three effects do to the store (bound to the chart in
 * actor.ts). Each one is idempotent: it writes the same values when run
 * again, revokes only keys still active, deletes by id or by workspace, and fires hooks whose
 * subscribers are idempotent by contract (kernel/customer-lifecycle.ts). That is what lets the runtime
 * re-run an effect that was in flight at a crash, and the chart retry one that failed.
 */
import { iso } from '../../clock'
import type { CustomerLifecycleHooks } from '../../kernel/customer-lifecycle'
import type { WorkspaceRepo } from '../workspaces/public'
import type { CustomerErasure } from './erasure'

export interface ArchiveWork {
  id: string
  developerId: string | null
  archivedAt: number
  eraseAt: number
}
export interface RestoreWork {
  id: string
  developerId: string | null
  restoredAt: number
}
export interface EraseWork {
  id: string
  developerId: string | null
  erasedAt: number
}

export interface CustomerLifecycleEffectDeps {
  /** The observed repository: each write drops cached principals of the workspace everywhere. */
  workspaces: WorkspaceRepo
  keys: { revokeAll(workspaceId: string): Promise<number> }
  hooks: CustomerLifecycleHooks
  erasure: Pick<CustomerErasure, 'erase'>
}

export class CustomerLifecycleEffects {
  constructor(private readonly deps: CustomerLifecycleEffectDeps) {}

  /**
   * DELETE applied: archived first (requests into it answer 410 from here on), then its keys
   * revoked (they never come back, not even with a restore), then the other features' hooks.
   */
  async archive(work: ArchiveWork): Promise<void> {
    const { workspaces, keys, hooks } = this.deps
    await workspaces.update(work.id, {
      status: 'deleted',
      archivedAt: iso(work.archivedAt),
      eraseAfter: iso(work.eraseAt),
      updatedAt: iso(work.archivedAt),
    })
    await keys.revokeAll(work.id)
    await hooks.fire('deleted', { customerId: work.id, developerId: work.developerId, at: work.archivedAt })
  }

  /** Restore applied: the workspace only. Keys stay revoked, campaigns stay cancelled. */
  async restore(work: RestoreWork): Promise<void> {
    await this.deps.workspaces.update(work.id, { status: 'active', archivedAt: null, eraseAfter: null, updatedAt: iso(work.restoredAt) })
    await this.deps.hooks.fire('restored', { customerId: work.id, developerId: work.developerId, at: work.restoredAt })
  }

  /**
   * 30 days passed: its data (erasure.ts), then other features' data (hooks), and the workspace
   * document last, so until everything else is gone the customer still shows as deleted (410,
   * `archived=true`) and still counts toward the plan's customer limit. Once the document is gone
   * the customer is unknown: GET /customers/{id} and its Service-Workspace header answer 404, and
   * a new customer may take its place in the limit. The actor's snapshot (state `erased`,
   * `erasedAt`) is what remains, for operators.
   */
  async erase(work: EraseWork): Promise<void> {
    await this.deps.erasure.erase(work.id)
    await this.deps.hooks.fire('erased', { customerId: work.id, developerId: work.developerId, at: work.erasedAt })
    await this.deps.workspaces.delete(work.id)
  }
}
