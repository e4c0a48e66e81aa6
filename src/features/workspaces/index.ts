/**
 * Tenancy: developer and customer workspaces, API keys, the `Service-Workspace` resolution, and
 * the HTTP contexts every surface's routes use (it is first in the feature list for that reason).
 * API keys (keys.ts, key-repository.ts, principal-cache.ts) live in this folder, not one of their
 * own: they have no routes or build apart from tenancy's, which issues, checks and revokes them.
 */
import { consoleAuth } from '../../http/console-auth'
import { v1Context } from '../../http/context'
import { legacyContext } from '../../http/legacy-context'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import type { Principal } from '../../kernel/tenancy'
import { observeWrites } from '../../store/observe'
import { workspacesConsole } from './console'
import { apiKeysSpec, openApiKeys } from './key-repository'
import { KeyService } from './keys'
import { tenancyRef } from './public'
import { openWorkspaces } from './repository'
import { WorkspaceResolver } from './resolver'
import { WorkspaceService } from './service'

export const tenancyFeature = defineFeature(tenancyRef, {
  async build(kernel) {
    const { store, clock, coordination, config } = kernel
    const [stored, keyRepo] = await Promise.all([openWorkspaces(store), openApiKeys(store)])
    // Every workspace write drops the cached principals that carry that workspace.
    const workspaceRepo = observeWrites(stored, (id) => keys.invalidateWorkspace(id))
    const keys: KeyService = new KeyService(keyRepo, workspaceRepo, clock, coordination)
    await keys.start()
    const workspaces = new WorkspaceService(workspaceRepo, clock)
    const resolver = new WorkspaceResolver(workspaceRepo)
    if (!config.consoleToken) throw new Error('CONSOLE_TOKEN is required to build the console surface (startServer provides one)')
    // The authenticator port the kernel's HTTP contexts run on (http/authenticator.ts).
    const auth = { authenticate: (header: string | null) => keys.authenticate(header), resolve: (principal: Principal, header: string | null) => resolver.resolve(principal, header) }
    const http = {
      v1: v1Context({ auth, coordination }),
      legacy: legacyContext({ auth, coordination, clock, server: () => kernel.listening.server }),
      console: consoleAuth(config.consoleToken, (id) => workspaceRepo.get(id)),
    }
    kernel.provideHttp(http)
    kernel.customerHooks.onErased(eraseCollections(store, [apiKeysSpec]), 'keys erased')
    return {
      services: { workspaces, workspaceRepo, keys, resolver, auth },
      console: [workspacesConsole({ auth: http.console, workspaces, keys })],
      stop: () => keys.stop(),
    }
  },
})
