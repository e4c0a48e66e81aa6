/** What other features may use of agents: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { AgentService } from './service'

export interface AgentsServices {
  agents: AgentService
}

export const agentsRef = featureRef<AgentsServices>('agents')

export { isStarterPersonaLine } from './defaults'
export { languageCode } from './languages'
export { Agent, PatchAgent } from './model'
export type { AgentDoc } from './repository'
export type { AgentService } from './service'
export { dialsOf, withDials } from './voice-dials'
export { voicemailFor } from './voicemail'
