/**
 * The agent a simulated call talks as (the simulations feature places them): the draft as it is
 * now, or the version it names, live or not. Real calls always talk as the published version
 * (voice-pipeline.ts); a simulation exists to try the others before anyone is served them.
 */
import type { AgentDoc, AgentService } from '../../agents/public'
import type { CallSimulation } from '../records/repository'
import type { PublishedAgents } from '../service'

export interface SimulatedAgentDeps {
  agents: Pick<AgentService, 'get'>
  published: Pick<PublishedAgents, 'version'>
}

/** The agent and the version it is (null: the draft); null when the agent or the version is gone. */
export async function simulatedAgent(d: SimulatedAgentDeps, workspaceId: string, agentId: string, simulation: CallSimulation): Promise<{ agent: AgentDoc; version: number | null } | null> {
  if (simulation.target === 'draft') {
    const agent = await d.agents.get(workspaceId, agentId).catch(() => null)
    return agent ? { agent, version: null } : null
  }
  const agent = await d.published.version(workspaceId, agentId, simulation.target)
  return agent ? { agent, version: simulation.target } : null
}
