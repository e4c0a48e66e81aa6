/** Agents: the agent resource, its legacy integer numbers, and the agent-deleted cascade others join. */
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { AgentNumbers, agentNumbersSpec } from './agent-numbers'
import { agentsRef } from './public'
import { openAgents } from './repository'
import { AgentService } from './service'
import { agentsV1 } from './v1'

export const agentsFeature = defineFeature(agentsRef, {
  async build(kernel) {
    const { store, clock, config } = kernel
    const repo = await openAgents(store)
    // A new agent gets gpt-4o-mini when the service has an OpenAI key of its own, else `local`.
    const defaultModel = config.providers.openaiApiKey ? 'gpt-4o-mini' : 'local'
    const agents = new AgentService(repo, clock, defaultModel, await AgentNumbers.open(store, repo))
    kernel.customerHooks.onErased(eraseCollections(store, [agentNumbersSpec]), 'agent numbers erased')
    return { services: { agents }, v1: [agentsV1({ context: kernel.http.v1, agents })] }
  },
})
