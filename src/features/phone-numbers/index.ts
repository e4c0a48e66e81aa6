/** Phone numbers: rented or brought in the console, each assignable to one agent; listed on v1. */
import { agentsFeature } from '../agents'
import { defineFeature, eraseCollections } from '../feature'
import { tenancyFeature } from '../workspaces'
import { phoneNumbersConsole } from './console'
import { openPhoneNumbers, phoneNumbersSpec } from './repository'
import { PhoneNumberService } from './service'
import { phoneNumbersV1 } from './v1'

export const phoneNumbersFeature = defineFeature({
  name: 'phone-numbers',
  async build(kernel, use) {
    const { agents } = use(agentsFeature)
    const { workspaces } = use(tenancyFeature)
    const repo = await openPhoneNumbers(kernel.store)
    const numbers = new PhoneNumberService(repo, (ws, id) => agents.exists(ws, id), kernel.clock, (agentId, number) => agents.setPhoneNumber(agentId, number))
    agents.onDelete((agent) => numbers.unassignAgent(agent.id))
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [phoneNumbersSpec]), 'phone numbers erased')
    return {
      services: { numbers },
      v1: [phoneNumbersV1({ context: kernel.http.v1, numbers })],
      console: [phoneNumbersConsole({ auth: kernel.http.console, workspaces, numbers })],
    }
  },
})

// Re-exported for other features (they import from this index, never from inner files).
export type { PhoneNumberService } from './service'
export type { PhoneNumberDoc } from './repository'
