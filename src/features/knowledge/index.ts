/** Knowledge: documents (a URL fetched and indexed, or pasted text) an agent answers from. */

import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { knowledgeRef } from './public'
import { DOCUMENTS, PASSAGES, SEARCHES } from './repository'
import { KnowledgeService } from './service'
import { syncKnowledgeAcrossInstances } from './sync'
import { knowledgeV1 } from './v1'

export const knowledgeFeature = defineFeature(knowledgeRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const knowledge = await KnowledgeService.open(kernel.store, kernel.clock, { allowPrivate: kernel.config.allowPrivateWebhookTargets })
    agents.onDelete((agent) => knowledge.removeAllForAgent(agent.workspaceId, agent.id))
    // Passages before their document, as a delete does.
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [PASSAGES, DOCUMENTS, SEARCHES]), 'knowledge erased')
    // Other instances drop their cached index of an agent whose knowledge changed here.
    const stopSync = await syncKnowledgeAcrossInstances(knowledge, kernel.coordination, kernel.logger)
    return { services: { knowledge }, v1: [knowledgeV1({ context: kernel.http.v1, agents, knowledge })], stop: stopSync }
  },
})
