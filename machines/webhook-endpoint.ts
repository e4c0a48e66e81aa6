/**
 * Webhook endpoint, v1 (docs/spec.md "Webhook endpoint (v1)" and the v1 delivery rules): each event is
 * attempted once; five failures in a row switch the endpoint off; PATCH `enabled: true` turns it
 * back on and forgives past failures; deleting the customer switches it off.
 *
 * The chart records delivery outcomes; the deliveries themselves run outside it (one attempt
 * each, per-endpoint lanes in the webhooks feature), so a slow receiver never holds the chart.
 * Its one effect is telling the developer it was switched off (Events rule 8): the invoked actor
 * `notify`, implemented in the webhooks feature's endpoint-actor.ts, run in the `notifying` state between the
 * fifth failure and `disabled`.
 *
 * Not shown in docs/spec.md, chosen here:
 * - PATCH `enabled: false` switches it off too (`disabledReason: 'request'`); PATCH
 *   `enabled: true` on an enabled endpoint also forgives the failures counted so far.
 * - On the fifth failure `lastError` reads "switched off after 5 failed deliveries in a row: <last
 *   error>", and the developer is notified; not on the other switch-offs, which someone asked for.
 * - Deleting the customer sets `lastError` to "switched off: customer <org_…> was deleted", so a
 *   reader of the restored customer's webhooks sees why they are off. PATCH `enabled: false` keeps
 *   the last delivery error: the reader is the one who asked.
 * - A delivery outcome reported while off is refused (nothing should be attempted then): the
 *   sender can ask `canApply(snapshot, 'delivery.failed')` before sending.
 * - `lastError` stays after a success (it is the last error seen); `lastStatus` and `lastSentAt`
 *   follow every attempt.
 * - Restoring a deleted customer leaves its endpoints off until PATCHed back on.
 */
import { assign, fromPromise, type SnapshotFrom, setup } from 'xstate'
import { type CanApply, canApplyOn, type Refusal, type RefusalParams, refusalOf } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. 2: notify became an invoked actor. */
export const MACHINE_VERSION = 2

/** docs/spec.md Limits: webhook consecutive failures before switch-off (v1). */
export const FAILURES_BEFORE_SWITCH_OFF = 5

export type WebhookEndpointState = 'enabled' | 'notifying' | 'disabled'
export type DisabledReason = 'failures' | 'request' | 'customer_deleted'

export interface WebhookEndpointContext {
  id: string
  failuresInARow: number
  /** Status of the last attempt (HTTP, or the SMTP reply code for email); null when none came. */
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
  /** `customerId` is the deleted customer workspace (`org_…`), named in `lastError`. */
  | { type: 'customer.deleted'; at: number; customerId: string }

/** What the `notify` effect is given: which endpoint, why, and when it was switched off. */
export interface NotifyInput {
  endpointId: string
  lastError: string | null
  at: number | null
}

/** Effects: invoked actors the runtime binding provides with `machine.provide({ actors })`. */
export const WEBHOOK_ENDPOINT_EFFECTS = ['notify'] as const
export type WebhookEndpointEffect = (typeof WEBHOOK_ENDPOINT_EFFECTS)[number]

const notAttempted = (state: string) => ({
  actions: {
    type: 'recordRefusal' as const,
    params: { state, message: `endpoint is switched off (${state}); deliveries are not attempted until it is enabled` },
  },
})

export const webhookEndpointMachine = setup({
  types: {
    context: {} as WebhookEndpointContext,
    events: {} as WebhookEndpointEvent,
    input: {} as WebhookEndpointInput,
  },
  actors: {
    notify: fromPromise<void, NotifyInput>(async () => {
      throw new Error('provided by the webhooks binding')
    }),
  },
  actions: {
    recordSuccess: assign(({ event }) => ({
      failuresInARow: 0,
      lastStatus: event.type === 'delivery.succeeded' ? event.status : null,
      lastSentAt: event.type === 'delivery.succeeded' ? event.at : null,
    })),
    recordFailure: assign(({ context, event }) => ({
      failuresInARow: context.failuresInARow + 1,
      lastStatus: event.type === 'delivery.failed' ? event.status : null,
      lastError: event.type === 'delivery.failed' ? event.error : context.lastError,
      lastSentAt: event.type === 'delivery.failed' ? event.at : context.lastSentAt,
    })),
    switchOff: assign(({ context, event }, params: { reason: DisabledReason }) => ({
      disabledReason: params.reason,
      lastError:
        params.reason === 'failures'
          ? `switched off after ${FAILURES_BEFORE_SWITCH_OFF} failed deliveries in a row: ${context.lastError ?? 'unknown error'}`
          : params.reason === 'customer_deleted' && event.type === 'customer.deleted'
            ? `switched off: customer ${event.customerId} was deleted`
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
            target: 'notifying',
            actions: ['recordFailure', { type: 'switchOff', params: { reason: 'failures' } }],
          },
          { actions: 'recordFailure' },
        ],
        'endpoint.enable': { actions: 'forgive' },
        'endpoint.disable': { target: 'disabled', actions: { type: 'switchOff', params: { reason: 'request' } } },
        'customer.deleted': { target: 'disabled', actions: { type: 'switchOff', params: { reason: 'customer_deleted' } } },
      },
    },
    notifying: {
      description: 'enabled: false — just switched off by failures; the developer is being told (Events rule 8).',
      invoke: {
        id: 'notify',
        src: 'notify',
        input: ({ context }) => ({ endpointId: context.id, lastError: context.lastError, at: context.lastSentAt }),
        // A notification that could not be stored is logged by the binding; the endpoint stays off either way.
        onDone: { target: 'disabled' },
        onError: { target: 'disabled' },
      },
      on: {
        'endpoint.enable': { target: 'enabled', actions: 'forgive' },
        'customer.deleted': { target: 'disabled', actions: { type: 'switchOff', params: { reason: 'customer_deleted' } } },
        'delivery.succeeded': notAttempted('notifying'),
        'delivery.failed': notAttempted('notifying'),
      },
    },
    disabled: {
      description: 'enabled: false — nothing is sent; see disabledReason and delivery.lastError.',
      on: {
        'endpoint.enable': { target: 'enabled', actions: 'forgive' },
        'delivery.succeeded': notAttempted('disabled'),
        'delivery.failed': notAttempted('disabled'),
      },
    },
  },
})

export type WebhookEndpointSnapshot = SnapshotFrom<typeof webhookEndpointMachine>

/** Would this move apply? `{ ok: false }` carries the state to name. */
export function canApply(target: WebhookEndpointSnapshot | WebhookEndpointState, event: WebhookEndpointEvent | WebhookEndpointEvent['type']): CanApply {
  return canApplyOn(webhookEndpointMachine, target, event)
}

/** The API's `enabled` and `delivery` fields from a snapshot's state and context. */
export function endpointView(s: { value: unknown; context: WebhookEndpointContext }) {
  const { failuresInARow, lastStatus, lastError, lastSentAt } = s.context
  return { enabled: s.value === 'enabled', delivery: { failuresInARow, lastStatus, lastError, lastSentAt } }
}
