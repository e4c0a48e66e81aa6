/**
 * Tenancy: developer and customer workspaces, API keys, the `Service-Workspace` resolution, and
 * the HTTP contexts every surface's routes use (it is first in the feature list for that reason).
 */
import { consoleAuth } from '../../http/console-auth'
import { v1Context } from '../../http/context'
import { legacyContext } from '../../http/legacy-context'
import { observeWrites } from '../../store/observe'
import { defineFeature, eraseCollections } from '../feature'
import { apiKeysSpec, openApiKeys } from '../keys/repository'
import { KeyService } from '../keys/service'
import { workspacesConsole } from './console'
import { openWorkspaces } from './repository'
import { WorkspaceResolver } from './resolver'
import { WorkspaceService } from './service'

export const tenancyFeature = defineFeature({
  name: 'tenancy',
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
    const http = {
      v1: v1Context({ keys, resolver }),
      legacy: legacyContext({ keys, coordination, clock }),
      console: consoleAuth(config.consoleToken),
    }
    kernel.provideHttp(http)
    kernel.customerHooks.onErased(eraseCollections(store, [apiKeysSpec]), 'keys erased')
    return {
      services: { workspaces, workspaceRepo, keys, resolver },
      console: [workspacesConsole({ auth: http.console, workspaces, keys })],
      stop: () => keys.stop(),
    }
  },
})
