/**
 * What other features may use of tenancy (workspaces and API keys): its ref (for `use`), types and
 * helpers; never its build (index.ts). The workspace and principal shapes are the kernel's
 * (kernel/tenancy.ts).
 */

import type { Authenticator } from '../../http/authenticator'
import { featureRef } from '../../kernel/feature'
import type { Principal, WorkspaceDoc } from '../../kernel/tenancy'
import type { KeyService } from './keys'
import type { WorkspaceRepo } from './repository'
import type { WorkspaceResolver } from './resolver'
import type { WorkspaceService } from './service'

export interface TenancyServices {
  workspaces: WorkspaceService
  /** The workspaces collection; every write drops the cached principals that carry the workspace. */
  workspaceRepo: WorkspaceRepo
  keys: KeyService
  resolver: WorkspaceResolver
  /** The authenticator port the kernel's HTTP contexts run on. */
  auth: Authenticator<Principal, WorkspaceDoc>
}

export const tenancyRef = featureRef<TenancyServices>('tenancy')

export type { KeyService } from './keys'
export { newWorkspaceDoc, type WorkspaceRepo } from './repository'
export type { WorkspaceService } from './service'
