/**
 * The webhookEndpoint actor kind: the v1 endpoint chart (machines/webhook-endpoint.ts) bound to
 * its one effect, telling the developer the endpoint was switched off (switched-off-notice.ts). One
 * actor per v1 webhook, id = its `wh_…` id, spawned when the webhook is created.
 *
 * The effect is idempotent (the notification is keyed by endpoint and instant), because a crash
 * while it runs leaves a running child in the snapshot and the runtime re-runs it at boot.
 */
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import { MACHINE_VERSION, type NotifyInput, webhookEndpointMachine } from '../../../machines/webhook-endpoint'

/** The I/O behind the chart's effect. */
export interface WebhookEndpointEffectPort {
  notify(input: NotifyInput): Promise<void>
}

export const webhookEndpointKind = defineActorKind({
  kind: 'webhookEndpoint',
  machine: webhookEndpointMachine,
  version: MACHINE_VERSION,
  // Chart 1 had the same states and context and no running effects: its snapshots resume as they are.
  migrate: (stored) => (stored.version === 1 ? stored.snapshot : null),
  subject: (input: NotifyInput) => input.endpointId,
  provide: (port: WebhookEndpointEffectPort, { effect }) => ({
    actors: { notify: effect('notify', (input: NotifyInput) => port.notify(input)) },
  }),
})

export type WebhookEndpointActors = ActorsOf<typeof webhookEndpointKind>
