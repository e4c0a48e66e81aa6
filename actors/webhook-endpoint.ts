/**
 * The webhookEndpoint actor kind: the v1 endpoint chart (machines/webhook-endpoint.ts) bound to
 * its one effect, telling the developer the endpoint was switched off, and registered with the
 * runtime. One actor per v1 webhook, id = its `wh_…` id, spawned when the webhook is created.
 *
 * The effect is idempotent (the notification is keyed by endpoint and instant), because a crash
 * while it runs leaves a running child in the snapshot and the runtime re-runs it at boot.
 */
import { MACHINE_VERSION, type NotifyInput, webhookEndpointMachine } from '../machines/webhook-endpoint'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind } from './types'

export const WEBHOOK_ENDPOINT_KIND = 'webhookEndpoint'

export type WebhookEndpointActors = ActorKind<typeof webhookEndpointMachine>

/** The I/O behind the chart's effect (src/features/webhooks/switched-off-notice.ts). */
export interface WebhookEndpointEffectPort {
  notify(input: NotifyInput): Promise<void>
}

export function registerWebhookEndpoint(runtime: ActorRuntime, deps: { effects: WebhookEndpointEffectPort; clock: Clock; logger: Logger }): WebhookEndpointActors {
  const machine = webhookEndpointMachine.provide({
    actors: {
      notify: bindEffect<NotifyInput, void>(
        { kind: WEBHOOK_ENDPOINT_KIND, clock: deps.clock, logger: deps.logger },
        'notify',
        (input) => deps.effects.notify(input),
        (input) => input.endpointId,
      ),
    },
  })
  return runtime.register(WEBHOOK_ENDPOINT_KIND, {
    machine,
    version: MACHINE_VERSION,
    // Chart 1 had the same states and context and no running effects: its snapshots resume as they are.
    migrate: (stored) => (stored.version === 1 ? stored.snapshot : null),
  })
}
