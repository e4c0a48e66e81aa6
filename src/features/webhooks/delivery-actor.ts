/**
 * The webhookDelivery actor kind: the legacy delivery chart (machines/webhook-delivery.ts) bound
 * to its effect, one attempt (`deliver`, legacy-delivery.ts), with its retry deadline as a durable
 * timer. One actor per legacy delivery record, same id.
 *
 * The attempt is idempotent for the receiver (same event id and delivery id headers on every
 * attempt), because a crash mid-attempt re-runs it at boot. An attempt that throws (a bug, not a
 * failed delivery: those are outcomes) is turned into an error carrying the instant it failed, so
 * the chart can record it without reading a clock.
 */
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import { type DeliverInput, type DeliverOutput, deliveryDeadlines, MACHINE_VERSION, webhookDeliveryMachine } from '../../../machines/webhook-delivery'

/** The I/O behind the chart's effect. */
export interface WebhookDeliveryEffectPort {
  deliver(input: DeliverInput): Promise<DeliverOutput>
}

export const webhookDeliveryKind = defineActorKind({
  kind: 'webhookDelivery',
  machine: webhookDeliveryMachine,
  version: MACHINE_VERSION,
  deadlines: deliveryDeadlines,
  // A delivery is touched a few times in its life; holding finished ones in memory buys nothing.
  idleMs: 0,
  subject: (input: DeliverInput) => input.deliveryId,
  provide: (port: WebhookDeliveryEffectPort, { effect }) => ({
    actors: { deliver: effect('deliver', (input: DeliverInput) => port.deliver(input)) },
  }),
})

export type WebhookDeliveryActors = ActorsOf<typeof webhookDeliveryKind>
