/**
 * Customers: customer workspaces of a developer (SPEC.md Customer), their keys, and their
 * lifecycle — delete, restore, erase after 30 days — on the customer-workspace actor. What a
 * lifecycle move must also do elsewhere is each feature's own clean-up (kernel.customerHooks).
 */
import { registerCustomerWorkspace } from '../../../actors/customer-workspace'
import { agentsFeature } from '../agents'
import { contactsFeature } from '../contacts'
import { defineFeature } from '../../kernel/feature'
import { phoneNumbersFeature } from '../phone-numbers'
import { usageFeature } from '../usage'
import { tenancyFeature } from '../workspaces'
import { CustomerErasure } from './erasure'
import { CustomerLifecycle } from './lifecycle'
import { CustomerLifecycleEffects } from './lifecycle-effects'
import { CustomerService } from './service'
import { customersV1 } from './v1'

export const customersFeature = defineFeature({
  name: 'customers',
  async build(kernel, use) {
    const { workspaceRepo, keys } = use(tenancyFeature)
    const { agents } = use(agentsFeature)
    const { numbers } = use(phoneNumbersFeature)
    const { contacts } = use(contactsFeature)
    const { meter } = use(usageFeature)
    const { store, clock, logger, runtime, coordination, customerHooks } = kernel
    const customers = new CustomerService(
      workspaceRepo,
      { agents: (ws) => agents.countIn(ws), phoneNumbers: (ws) => numbers.countIn(ws), contacts: (ws) => contacts.countIn(ws) },
      meter,
      clock,
    )
    const effects = new CustomerLifecycleEffects({ workspaces: workspaceRepo, keys, hooks: customerHooks, erasure: new CustomerErasure(store, agents) })
    const actors = registerCustomerWorkspace(runtime, { effects, clock, logger })
    const lifecycle = new CustomerLifecycle({ actors, workspaces: workspaceRepo, numbersHeldBy: (ws) => numbers.heldBy(ws), clock })
    return {
      services: { customers, lifecycle },
      v1: [customersV1({ context: kernel.http.v1, customers, keys, coordination, lifecycle })],
    }
  },
})

export type { CustomerLifecycleEvent } from '../../kernel/customer-lifecycle'

// Re-exported for other features (they import from this index, never from inner files).
export { checkMetadata } from './rules'
