/**
 * Webhooks: v1 endpoints and legacy endpoints with their deliveries, and the email transport (SMTP
 * or the outbox). The outbox's console route lives here (outbox-console.ts), not in a folder of its
 * own: it only lists what this feature's email transport kept.
 */

import { defineFeature } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { notificationsRef } from '../notifications/public'
import { webhooksLegacy } from './legacy'
import { outboxConsole } from './outbox-console'
import { webhooksRef } from './public'
import { webhooksV1 } from './v1'
import { buildWebhooksFeature } from './wiring'

export const webhooksFeature = defineFeature(webhooksRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const { notifications } = use(notificationsRef)
    const { config, store, clock, logger, bus, runtime, coordination, customerHooks } = kernel
    const built = await buildWebhooksFeature({ config, store, clock, logger, bus, runtime, agents, coordination, notifications, metrics: kernel.metrics })
    customerHooks.onDeleted((e) => built.switchOffCustomerWebhooks(e.customerId, e.at), 'webhooks switched off')
    customerHooks.onErased((e) => built.eraseCustomerWebhooks(e.customerId), 'webhooks erased')
    const auth = kernel.http.console
    return {
      services: { webhooks: built.webhooks, legacyWebhooks: built.legacyWebhooks, outbox: built.outbox },
      v1: [webhooksV1({ context: kernel.http.v1, webhooks: built.webhooks })],
      legacy: [webhooksLegacy({ context: kernel.http.legacy, webhooks: built.legacyWebhooks })],
      console: [outboxConsole({ auth, outbox: built.outbox })],
      start: () => built.start(),
      drain: async () => built.drain(),
      stop: () => built.stop(),
    }
  },
})
