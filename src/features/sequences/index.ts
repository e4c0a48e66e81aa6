/**
 * Sequences: messages sent to an enrolled person over time, each enrolment an actor whose waits
 * are durable timers; stopped by a reply (exitOnReply), an opt-out, or the customer's deletion.
 */
import { usageFeature } from '../usage'
import { registerEnrolment, type EnrolmentActors } from '../../../actors/enrolment'
import { agentsFeature } from '../agents'
import { contactsFeature } from '../contacts'
import { conversationsFeature } from '../conversations'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { messagingFeature } from '../messaging'
import { phoneNumbersFeature } from '../phone-numbers'
import { templatesFeature } from '../templates'
import { enrolmentsSpec, openEnrolments, openSequences, sequencesSpec } from './repository'
import { sequencesConsole, sequencesV1 } from './routes'
import { SequenceService } from './service'

export const sequencesFeature = defineFeature({
  name: 'sequences',
  async build(kernel, use) {
    const { agents } = use(agentsFeature)
    const { contacts } = use(contactsFeature)
    const { numbers } = use(phoneNumbersFeature)
    const { conversations } = use(conversationsFeature)
    const { templates } = use(templatesFeature)
    const { platform, inbound } = use(messagingFeature)
    const { meter } = use(usageFeature)
    let actors: EnrolmentActors | null = null
    const sequences = new SequenceService({ sequences: await openSequences(kernel.store), enrolments: await openEnrolments(kernel.store), contacts, numbers, templates, conversations, platform, meter, clock: kernel.clock, actors: () => actors!, agentExists: (workspaceId, id) => agents.exists(workspaceId, id) })
    actors = registerEnrolment(kernel.runtime, { effects: sequences.effects(), clock: kernel.clock, logger: kernel.logger })
    inbound.onCustomerMessage((workspaceId, phone) => sequences.stopFor(workspaceId, phone, 'replied'))
    contacts.onConsentWithdrawn((contact) => sequences.stopFor(contact.workspaceId, contact.phone, 'opted_out'))
    kernel.customerHooks.onDeleted((e) => sequences.stopWorkspace(e.customerId), 'sequences stopped')
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [enrolmentsSpec, sequencesSpec]), 'sequences erased')
    return {
      services: { sequences },
      console: [sequencesConsole({ auth: kernel.http.console, sequences })],
      v1: [sequencesV1({ context: kernel.http.v1, sequences })],
    }
  },
})
