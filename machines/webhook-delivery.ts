/**
 * Webhook delivery, legacy (SPEC.md "Webhook delivery (legacy)"): one record per event per
 * endpoint, with statuses pending (queued), success (a 2xx), retrying (failed, retry scheduled)
 * and failed (all attempts used). POST retry moves only a failed delivery back to pending.
 *
 * The wait before a retry is a durable deadline (`nextAttemptAt` in context) woken by the
 * runtime's timer with `timer.due`; the guard `event.at >= nextAttemptAt` makes an early or
 * repeated wake-up do nothing.
 *
 * Not shown in SPEC.md, chosen here:
 * - Attempts in all = max_retries + 1. The wait after the n-th failed attempt is
 *   min(30 s · 4^(n−1), 1 h): 30 s, 2 min, 8 min, 32 min, then 1 h (max_retries is at most 5).
 * - A timeout (timeout_ms) or a non-2xx answer is a failed attempt; the runtime reports it with
 *   `delivery.failed` (status null when there was no answer).
 * - Retry resets `attempts` to 0 and clears `completedAt`; the last `responseStatus` and
 *   `errorMessage` stay until the next attempt replaces them.
 * - An outcome reported outside `pending` (a late answer after a timeout) is ignored.
 * - After a restart a `pending` delivery is not re-sent by the chart (entry actions do not re-run
 *   on restore): the runtime re-drives pending deliveries when it rehydrates them.
 */
import { assign, setup, type SnapshotFrom } from 'xstate'
import { canApplyOn, refusalOf, type CanApply, type Refusal, type RefusalParams } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
export const MACHINE_VERSION = 1

export const FIRST_RETRY_DELAY_MS = 30_000
export const MAX_RETRY_DELAY_MS = 60 * 60_000

/** The wait after the n-th failed attempt (n ≥ 1). */
export const retryDelayMs = (n: number): number =>
  Math.min(FIRST_RETRY_DELAY_MS * 4 ** Math.max(0, n - 1), MAX_RETRY_DELAY_MS)

export type WebhookDeliveryState = 'pending' | 'success' | 'retrying' | 'failed'

export interface WebhookDeliveryContext {
  id: string
  /** The endpoint's max_retries when the event was queued (0–5). */
  maxRetries: number
  attempts: number
  nextAttemptAt: number | null
  responseStatus: number | null
  errorMessage: string | null
  completedAt: number | null
  lastRefusal: Refusal | null
}

export interface WebhookDeliveryInput {
  id: string
  maxRetries: number
}

export type WebhookDeliveryEvent =
  | { type: 'delivery.succeeded'; at: number; status: number }
  | { type: 'delivery.failed'; at: number; status: number | null; error: string }
  | { type: 'timer.due'; at: number }
  /** POST .../deliveries/{id}/retry */
  | { type: 'delivery.retry'; at: number }

/** Effects the runtime implements with `machine.provide({ actions })`. */
export const WEBHOOK_DELIVERY_EFFECTS = ['deliver', 'scheduleAttempt'] as const
export type WebhookDeliveryEffect = (typeof WEBHOOK_DELIVERY_EFFECTS)[number]

const noop = () => {}
const onlyFailed = (state: WebhookDeliveryState) => ({
  actions: {
    type: 'recordRefusal' as const,
    params: { state, message: `delivery is ${state}; only failed deliveries can be retried` },
  },
})

export const webhookDeliveryMachine = setup({
  types: {
    context: {} as WebhookDeliveryContext,
    events: {} as WebhookDeliveryEvent,
    input: {} as WebhookDeliveryInput,
  },
  actions: {
    deliver: noop,
    scheduleAttempt: noop,
    recordSuccess: assign(({ context, event }) => ({
      attempts: context.attempts + 1,
      responseStatus: event.type === 'delivery.succeeded' ? event.status : null,
      errorMessage: null,
      completedAt: event.at,
    })),
    recordFailure: assign(({ context, event }) => ({
      attempts: context.attempts + 1,
      responseStatus: event.type === 'delivery.failed' ? event.status : null,
      errorMessage: event.type === 'delivery.failed' ? event.error : null,
    })),
    // Runs after recordFailure, so `attempts` already counts the attempt that just failed.
    bookRetry: assign({ nextAttemptAt: ({ context, event }) => event.at + retryDelayMs(context.attempts) }),
    markFailed: assign({ completedAt: ({ event }) => event.at, nextAttemptAt: () => null }),
    clearDeadline: assign({ nextAttemptAt: () => null }),
    requeue: assign({ attempts: () => 0, nextAttemptAt: () => null, completedAt: () => null }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    // Checked before recordFailure: one more attempt is allowed after this failed one.
    attemptsLeft: ({ context }) => context.attempts + 1 < context.maxRetries + 1,
    isDue: ({ context, event }) =>
      context.nextAttemptAt !== null && typeof event.at === 'number' && event.at >= context.nextAttemptAt,
  },
}).createMachine({
  id: 'webhookDelivery',
  description: 'One legacy webhook delivery and its retries.',
  context: ({ input }) => ({
    id: input.id,
    maxRetries: Math.min(5, Math.max(0, Math.floor(input.maxRetries))),
    attempts: 0,
    nextAttemptAt: null,
    responseStatus: null,
    errorMessage: null,
    completedAt: null,
    lastRefusal: null,
  }),
  initial: 'pending',
  states: {
    pending: {
      description: 'Queued: an attempt is being made.',
      entry: 'deliver',
      on: {
        'delivery.succeeded': { target: 'success', actions: 'recordSuccess' },
        'delivery.failed': [
          { guard: 'attemptsLeft', target: 'retrying', actions: ['recordFailure', 'bookRetry'] },
          { target: 'failed', actions: ['recordFailure', 'markFailed'] },
        ],
        'delivery.retry': onlyFailed('pending'),
      },
    },
    retrying: {
      description: 'The last attempt failed; the next one is due at nextAttemptAt.',
      entry: 'scheduleAttempt',
      on: {
        'timer.due': { guard: 'isDue', target: 'pending', actions: 'clearDeadline' },
        'delivery.retry': onlyFailed('retrying'),
      },
    },
    success: {
      description: 'The endpoint answered 2xx.',
      on: { 'delivery.retry': onlyFailed('success') },
    },
    failed: {
      description: 'Every attempt (max_retries + 1) failed; POST retry queues it again.',
      on: { 'delivery.retry': { target: 'pending', actions: 'requeue' } },
    },
  },
})

export type WebhookDeliverySnapshot = SnapshotFrom<typeof webhookDeliveryMachine>

/** Would this move apply? `{ ok: false }` carries the state to name. */
export function canApply(
  target: WebhookDeliverySnapshot | WebhookDeliveryState,
  event: WebhookDeliveryEvent | WebhookDeliveryEvent['type'],
): CanApply {
  return canApplyOn(webhookDeliveryMachine, target, event)
}
