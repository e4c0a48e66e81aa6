/**
 * The endpoint chart's `notify` effect: a v1 webhook switched off by failures is something the
 * service would tell the customer, so the developer is notified (docs/spec.md Events rule 8; the
 * customer's name goes in the title). Idempotent: keyed by the webhook and the switch-off instant.
 */

import { iso } from '../../clock'
import type { NotificationService } from '../notifications/public'
import type { WebhookEndpointEffectPort } from './endpoint-actor'
import type { WebhookRepos } from './repository'

export function switchedOffNotice(deps: { repos: WebhookRepos; notifications: NotificationService }): WebhookEndpointEffectPort {
  return {
    async notify({ endpointId, lastError, at }) {
      // The endpoint actor knows only the id: the webhook names its own workspace.
      const hook = await deps.repos.webhooks.acrossWorkspaces.get(endpointId)
      if (!hook) return // deleted meanwhile: nothing left to tell anyone about
      await deps.notifications.notify({
        workspaceId: hook.workspaceId,
        kind: 'webhook.disabled',
        title: `Webhook switched off: ${hook.url}`,
        body:
          `Webhook ${hook.id} (${hook.url}) of agent ${hook.agentId} was switched off: ${lastError ?? 'five failed deliveries in a row'}. ` +
          `Events since then were not sent. Catch up by reading what you missed, then PATCH /webhooks/${hook.id} with {"enabled": true}.`,
        data: { webhookId: hook.id, agent: hook.agentId, url: hook.url, lastError, switchedOffAt: at === null ? null : iso(at) },
        key: `webhook.disabled:${hook.id}:${at ?? 'unknown'}`,
      })
    },
  }
}
