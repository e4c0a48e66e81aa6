/**
 * Sequences: messages sent to an enrolled person over time, each enrolment an actor whose waits
 * are durable timers; stopped by a reply (exitOnReply), an opt-out, or the customer's deletion.
 */

import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { contactsRef } from '../contacts/public'
import { conversationsRef } from '../conversations/public'
import { messagingRef } from '../messaging/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { templatesRef } from '../templates/public'
import { usageRef } from '../usage/public'
import { enrolmentKind } from './actor'
import { sequencesRef } from './public'
import { enrolmentsSpec, openEnrolments, openSequences, sequencesSpec } from './repository'
import { sequencesConsole, sequencesV1 } from './routes'
import { SequenceService } from './service'

export const sequencesFeature = defineFeature(sequencesRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const { contacts } = use(contactsRef)
    const { numbers } = use(phoneNumbersRef)
    const { conversations } = use(conversationsRef)
    const { templates } = use(templatesRef)
    const { platform, inbound } = use(messagingRef)
    const { meter } = use(usageRef)
    // The service spawns the actors whose effect it is: the kind's view first, registered after.
    const actors = enrolmentKind.actors(kernel.runtime)
    const sequences = new SequenceService({
      sequences: await openSequences(kernel.store),
      enrolments: await openEnrolments(kernel.store),
      contacts,
      numbers,
      templates,
      conversations,
      platform,
      meter,
      clock: kernel.clock,
      logger: kernel.logger,
      actors,
      agentExists: (workspaceId, id) => agents.exists(workspaceId, id),
    })
    enrolmentKind.register(kernel.runtime, sequences.effects())
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
