/**
 * Webhooks: v1 endpoints and legacy endpoints with their deliveries, the email transport (SMTP or
 * the outbox), and the developer notifications (SPEC.md Events rule 8).
 */
import { agentsFeature } from '../agents'
import { defineFeature } from '../../kernel/feature'
import { notificationsConsole } from '../notifications'
import { outboxConsole } from '../outbox'
import { tenancyFeature } from '../workspaces'
import { webhooksLegacy } from './legacy'
import { webhooksV1 } from './v1'
import { buildWebhooksFeature } from './wiring'

export const webhooksFeature = defineFeature({
  name: 'webhooks',
  async build(kernel, use) {
    const { agents } = use(agentsFeature)
    const { workspaceRepo } = use(tenancyFeature)
    const { config, store, clock, logger, bus, runtime, coordination, customerHooks } = kernel
    const built = await buildWebhooksFeature({ config, store, clock, logger, bus, runtime, agents, workspaces: workspaceRepo, coordination })
    customerHooks.onDeleted((e) => built.switchOffCustomerWebhooks(e.customerId, e.at), 'webhooks switched off')
    customerHooks.onErased((e) => built.eraseCustomerWebhooks(e.customerId), 'webhooks erased')
    const auth = kernel.http.console
    return {
      services: { webhooks: built.webhooks, legacyWebhooks: built.legacyWebhooks, notifications: built.notifications, outbox: built.outbox },
      v1: [webhooksV1({ context: kernel.http.v1, webhooks: built.webhooks })],
      legacy: [webhooksLegacy({ context: kernel.http.legacy, webhooks: built.legacyWebhooks })],
      console: [notificationsConsole({ auth, notifications: built.notifications }), outboxConsole({ auth, outbox: built.outbox })],
      stop: () => built.stop(),
    }
  },
})

// Re-exported for other features (they import from this index, never from inner files).
export { subscribes } from './repository'
export type { WebhookService } from './service'
