/** Agent versions (legacy surface): publish, checkpoint, rollback, diffs; and the published agent live channels serve. */

import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { knowledgeRef } from '../knowledge/public'
import { versionsLegacy } from './legacy'
import { versionsRef } from './public'
import { versionsSpec } from './repository'
import { buildVersionsFeature } from './wiring'

export const versionsFeature = defineFeature(versionsRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const { knowledge } = use(knowledgeRef)
    const built = await buildVersionsFeature({ store: kernel.store, clock: kernel.clock, logger: kernel.logger, runtime: kernel.runtime, agents, knowledge })
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [versionsSpec]), 'versions erased')
    return { services: built, legacy: [versionsLegacy({ context: kernel.http.legacy, versions: built.versions })] }
  },
})
