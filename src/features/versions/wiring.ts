/**
 * Builds the agent-versions feature so services.ts wires it in one call: the version store, the
 * publication actor kind (registered with the runtime, so call this before `runtime.start()`),
 * the version rules, and what live conversations are served (ServingAgents).
 */

import type { ActorRuntime } from '../../../actors/runtime'
import type { Clock } from '../../clock'
import type { Logger } from '../../logger'
import type { DocumentStore } from '../../store/port'
import type { AgentService } from '../agents/public'
import { agentPublicationKind } from './actor'
import { DraftReader, type KnowledgeLister } from './drafts'
import { PublicationEffects } from './effects'
import { Publication } from './publication'
import { VersionStore } from './repository'
import { VersionService } from './service'
import { ServingAgents } from './serving'

export interface VersionsFeature {
  versions: VersionService
  /** Live web chat and voice build their agent here (the published snapshot), never from the draft. */
  serving: ServingAgents
}

export async function buildVersionsFeature(deps: {
  store: DocumentStore
  clock: Clock
  logger: Logger
  runtime: ActorRuntime
  agents: AgentService
  knowledge: KnowledgeLister
}): Promise<VersionsFeature> {
  const { agents, logger } = deps
  const store = await VersionStore.open(deps.store)
  const drafts = new DraftReader(agents, deps.knowledge)
  const effects = new PublicationEffects(store, drafts, (workspaceId, id, fields, at) => agents.restore(workspaceId, id, fields, at))
  const publication = new Publication(agentPublicationKind.register(deps.runtime, effects), deps.clock, logger)
  const legacyAgents = { get: (workspaceId: string, ref: string) => agents.getLegacy(workspaceId, ref) }
  const versions = new VersionService({ agents: legacyAgents, agentNumber: (agent) => agents.legacyNumber(agent), drafts, versions: store, publication, logger })
  agents.onPatch(async (agent) => {
    // The edit is saved already; a chart that missed it is brought in step by the next status read.
    try {
      await versions.agentPatched(agent)
    } catch (err) {
      logger.warn({ err, agent: agent.id }, 'could not tell the publication chart about an agent edit')
    }
  })
  agents.onDelete((agent) => versions.removeAllForAgent(agent))
  return { versions, serving: new ServingAgents(agents, store) }
}
