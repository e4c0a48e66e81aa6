/**
 * The webhookDelivery actor kind: the legacy delivery chart (machines/webhook-delivery.ts) bound
 * to its effect, one attempt (`deliver`), and registered with the runtime with its retry deadline
 * as a durable timer. One actor per legacy delivery record, same id.
 *
 * The attempt is idempotent for the receiver (same event id and delivery id headers on every
 * attempt), because a crash mid-attempt re-runs it at boot. An attempt that throws (a bug, not a
 * failed delivery: those are outcomes) is turned into an error carrying the instant it failed, so
 * the chart can record it without reading a clock.
 */
import { type DeliverInput, type DeliverOutput, deliveryDeadlines, MACHINE_VERSION, webhookDeliveryMachine } from '../machines/webhook-delivery'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind } from './types'

export const WEBHOOK_DELIVERY_KIND = 'webhookDelivery'

export type WebhookDeliveryActors = ActorKind<typeof webhookDeliveryMachine>

/** The I/O behind the chart's effect (src/features/webhooks/legacy-delivery.ts). */
export interface WebhookDeliveryEffectPort {
  deliver(input: DeliverInput): Promise<DeliverOutput>
}

export function registerWebhookDelivery(runtime: ActorRuntime, deps: { effects: WebhookDeliveryEffectPort; clock: Clock; logger: Logger }): WebhookDeliveryActors {
  const machine = webhookDeliveryMachine.provide({
    actors: {
      deliver: bindEffect<DeliverInput, DeliverOutput>(
        { kind: WEBHOOK_DELIVERY_KIND, clock: deps.clock, logger: deps.logger },
        'deliver',
        (input) => deps.effects.deliver(input),
        (input) => input.deliveryId,
      ),
    },
  })
  return runtime.register(WEBHOOK_DELIVERY_KIND, {
    machine,
    version: MACHINE_VERSION,
    deadlines: deliveryDeadlines,
    // A delivery is touched a few times in its life; holding finished ones in memory buys nothing.
    idleMs: 0,
  })
}
