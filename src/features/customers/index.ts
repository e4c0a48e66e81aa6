/**
 * Customers: customer workspaces of a developer (docs/spec.md Customer), their keys, and their
 * lifecycle — delete, restore, erase after 30 days — on the customer-workspace actor. What a
 * lifecycle move must also do elsewhere is each feature's own clean-up (kernel.customerHooks).
 */
import { defineFeature } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { contactsRef } from '../contacts/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { usageRef } from '../usage/public'
import { tenancyRef } from '../workspaces/public'
import { customerWorkspaceKind } from './actor'
import { CustomerErasure } from './erasure'
import { CustomerLifecycle } from './lifecycle'
import { CustomerLifecycleEffects } from './lifecycle-effects'
import { customersRef } from './public'
import { CustomerService } from './service'
import { customersV1 } from './v1'

export const customersFeature = defineFeature(customersRef, {
  async build(kernel, use) {
    const { workspaceRepo, keys } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { numbers } = use(phoneNumbersRef)
    const { contacts } = use(contactsRef)
    const { meter } = use(usageRef)
    const { store, clock, runtime, coordination, customerHooks } = kernel
    const customers = new CustomerService(workspaceRepo, { agents: (ws) => agents.countIn(ws), phoneNumbers: (ws) => numbers.countIn(ws), contacts: (ws) => contacts.countIn(ws) }, meter, clock)
    const effects = new CustomerLifecycleEffects({ workspaces: workspaceRepo, keys, hooks: customerHooks, erasure: new CustomerErasure(store, agents) })
    const actors = customerWorkspaceKind.register(runtime, effects)
    const lifecycle = new CustomerLifecycle({ actors, workspaces: workspaceRepo, numbersHeldBy: (ws) => numbers.heldBy(ws), clock })
    return {
      services: { customers, lifecycle },
      v1: [customersV1({ context: kernel.http.v1, customers, keys, coordination, lifecycle })],
    }
  },
})
