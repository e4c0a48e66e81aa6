/** Agent versions (legacy surface): publish, checkpoint, rollback, diffs; and the published agent live channels serve. */
import { agentsFeature } from '../agents'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { knowledgeFeature } from '../knowledge'
import { versionsLegacy } from './legacy'
import { versionsSpec } from './repository'
import { buildVersionsFeature } from './wiring'

export const versionsFeature = defineFeature({
  name: 'versions',
  async build(kernel, use) {
    const { agents } = use(agentsFeature)
    const { knowledge } = use(knowledgeFeature)
    const built = await buildVersionsFeature({ store: kernel.store, clock: kernel.clock, logger: kernel.logger, runtime: kernel.runtime, agents, knowledge })
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [versionsSpec]), 'versions erased')
    return { services: built, legacy: [versionsLegacy({ context: kernel.http.legacy, versions: built.versions })] }
  },
})

// Re-exported for other features (they import from this index, never from inner files).
export { notPublished, type ServedAgent, type ServingAgents } from './serving'
