/**
 * Which workspace a v1 request runs in: docs/spec.md Authentication rule 3, row by row.
 * A customer key never leaves its customer (rule 5).
 */

import type { Principal } from '../../kernel/tenancy'
import { gone, invalid, notThere } from '../../refusals'
import type { WorkspaceDoc, WorkspaceRepo } from './repository'

export { WORKSPACE_HEADER } from '../../http/authenticator'

export class WorkspaceResolver {
  constructor(private readonly workspaces: WorkspaceRepo) {}

  /** The key's own workspace is answered at once; a customer named by the header is read from the store. */
  resolve(principal: Principal, header: string | undefined | null): WorkspaceDoc | Promise<WorkspaceDoc> {
    const wanted = header?.trim() || undefined
    const { home, developer } = principal
    if (home.kind === 'customer') {
      if (wanted === undefined || wanted === home.id) return home
      throw notThere(`workspace ${wanted} not found (this key works only inside customer ${home.id})`)
    }
    if (wanted === undefined || wanted === developer.id) return developer
    // "any value, from a workspace that has no customers → 400": deleted ones awaiting erasure count.
    if (!developer.developer) {
      throw invalid('Service-Workspace', 'this workspace has no customers; send the header only to act inside one of your customers')
    }
    return this.customer(developer, wanted)
  }

  private async customer(developer: WorkspaceDoc, wanted: string): Promise<WorkspaceDoc> {
    const customer = await this.workspaces.get(wanted)
    if (!customer || customer.parentId !== developer.id) throw notThere(`workspace ${wanted} not found`)
    if (customer.status === 'deleted') {
      throw gone(`customer ${customer.id} was deleted at ${customer.archivedAt} and will be erased at ${customer.eraseAfter}`, {
        deletedAt: customer.archivedAt,
        eraseAfter: customer.eraseAfter,
      })
    }
    return customer
  }
}
