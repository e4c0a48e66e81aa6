/**
 * Webhook endpoint, v1 (SPEC.md "Webhook endpoint (v1)" and the v1 delivery rules): each event is
 * attempted once; five failures in a row switch the endpoint off; PATCH `enabled: true` turns it
 * back on and forgives past failures; deleting the customer switches it off.
 *
 * Not shown in SPEC.md, chosen here:
 * - PATCH `enabled: false` switches it off too (`disabledReason: 'request'`); PATCH
 *   `enabled: true` on an enabled endpoint also forgives the failures counted so far.
 * - On the fifth failure `lastError` reads "switched off after 5 failed deliveries in a row: <last
 *   error>", and the developer is notified (`notifyEndpointDisabled`); not on the other switch-offs,
 *   which someone asked for.
 * - A delivery outcome reported while disabled is refused (nothing should be attempted then):
 *   the event bus can ask `canApply(snapshot, 'delivery.failed')` before sending.
 * - `lastError` stays after a success (it is the last error seen); `lastStatus` and `lastSentAt`
 *   follow every attempt.
 * - Restoring a deleted customer leaves its endpoints off until PATCHed back on.
 */
import { assign, setup, type SnapshotFrom } from 'xstate'
import { canApplyOn, refusalOf, type CanApply, type Refusal, type RefusalParams } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
export const MACHINE_VERSION = 1

/** SPEC.md Limits: webhook consecutive failures before switch-off (v1). */
export const FAILURES_BEFORE_SWITCH_OFF = 5

export type WebhookEndpointState = 'enabled' | 'disabled'
export type DisabledReason = 'failures' | 'request' | 'customer_deleted'

export interface WebhookEndpointContext {
  id: string
  failuresInARow: number
  /** HTTP status of the last attempt; null when it never got one (timeout, refused connection). */
  lastStatus: number | null
  lastError: string | null
  lastSentAt: number | null
  disabledReason: DisabledReason | null
  lastRefusal: Refusal | null
}

export interface WebhookEndpointInput {
  id: string
}

export type WebhookEndpointEvent =
  | { type: 'delivery.succeeded'; at: number; status: number }
  | { type: 'delivery.failed'; at: number; status: number | null; error: string }
  | { type: 'endpoint.enable'; at: number }
  | { type: 'endpoint.disable'; at: number }
  | { type: 'customer.deleted'; at: number }

/** Effects the runtime implements with `machine.provide({ actions })`. */
export const WEBHOOK_ENDPOINT_EFFECTS = ['notifyEndpointDisabled'] as const
export type WebhookEndpointEffect = (typeof WEBHOOK_ENDPOINT_EFFECTS)[number]

const noop = () => {}
const notAttempted = {
  actions: {
    type: 'recordRefusal' as const,
    params: { state: 'disabled', message: 'endpoint is disabled; deliveries are not attempted until it is enabled' },
  },
}

export const webhookEndpointMachine = setup({
  types: {
    context: {} as WebhookEndpointContext,
    events: {} as WebhookEndpointEvent,
    input: {} as WebhookEndpointInput,
  },
  actions: {
    notifyEndpointDisabled: noop,
    recordSuccess: assign(({ event }) => ({
      failuresInARow: 0,
      lastStatus: event.type === 'delivery.succeeded' ? event.status : null,
      lastSentAt: event.at,
    })),
    recordFailure: assign(({ context, event }) => ({
      failuresInARow: context.failuresInARow + 1,
      lastStatus: event.type === 'delivery.failed' ? event.status : null,
      lastError: event.type === 'delivery.failed' ? event.error : context.lastError,
      lastSentAt: event.at,
    })),
    switchOff: assign(({ context }, params: { reason: DisabledReason }) => ({
      disabledReason: params.reason,
      lastError:
        params.reason === 'failures'
          ? `switched off after ${FAILURES_BEFORE_SWITCH_OFF} failed deliveries in a row: ${context.lastError ?? 'unknown error'}`
          : context.lastError,
    })),
    forgive: assign({ failuresInARow: () => 0, disabledReason: () => null }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    // Checked before recordFailure runs: this failure would be the fifth in a row.
    fifthInARow: ({ context }) => context.failuresInARow + 1 >= FAILURES_BEFORE_SWITCH_OFF,
  },
}).createMachine({
  id: 'webhookEndpoint',
  description: 'A v1 webhook endpoint and its delivery health.',
  context: ({ input }) => ({
    id: input.id,
    failuresInARow: 0,
    lastStatus: null,
    lastError: null,
    lastSentAt: null,
    disabledReason: null,
    lastRefusal: null,
  }),
  initial: 'enabled',
  states: {
    enabled: {
      description: 'enabled: true — every subscribed event is attempted once.',
      on: {
        'delivery.succeeded': { actions: 'recordSuccess' },
        'delivery.failed': [
          {
            guard: 'fifthInARow',
            target: 'disabled',
            actions: ['recordFailure', { type: 'switchOff', params: { reason: 'failures' } }, 'notifyEndpointDisabled'],
          },
          { actions: 'recordFailure' },
        ],
        'endpoint.enable': { actions: 'forgive' },
        'endpoint.disable': { target: 'disabled', actions: { type: 'switchOff', params: { reason: 'request' } } },
        'customer.deleted': { target: 'disabled', actions: { type: 'switchOff', params: { reason: 'customer_deleted' } } },
      },
    },
    disabled: {
      description: 'enabled: false — nothing is sent; see disabledReason and delivery.lastError.',
      on: {
        'endpoint.enable': { target: 'enabled', actions: 'forgive' },
        'delivery.succeeded': notAttempted,
        'delivery.failed': notAttempted,
      },
    },
  },
})

export type WebhookEndpointSnapshot = SnapshotFrom<typeof webhookEndpointMachine>

/** Would this move apply? `{ ok: false }` carries the state to name. */
export function canApply(
  target: WebhookEndpointSnapshot | WebhookEndpointState,
  event: WebhookEndpointEvent | WebhookEndpointEvent['type'],
): CanApply {
  return canApplyOn(webhookEndpointMachine, target, event)
}

/** The API's `enabled` and `delivery` fields from a snapshot. */
export function endpointView(s: WebhookEndpointSnapshot) {
  const { failuresInARow, lastStatus, lastError, lastSentAt } = s.context
  return { enabled: s.value === 'enabled', delivery: { failuresInARow, lastStatus, lastError, lastSentAt } }
}
