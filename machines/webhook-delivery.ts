/**
 * Webhook delivery, legacy (docs/spec.md "Webhook delivery (legacy)"): one record per event per
 * endpoint, with statuses pending (queued), success (a 2xx), retrying (failed, retry scheduled)
 * and failed (all attempts used). POST retry moves only a failed delivery back to pending.
 *
 * The attempt is the invoked actor `deliver` (implemented in the webhooks feature's delivery-actor.ts), started
 * on entry to `pending`; its outcome (`onDone`) decides the next state. A crash while it runs
 * leaves a snapshot with a running child, which the runtime resumes at boot. The effect claims each
 * attempt's number in the delivery record before the request leaves and records a success before
 * it reports it, so a resumed attempt is never sent after a recorded success and always goes out
 * as the next attempt; the outcome carries the number it was sent as (`attempt`), which is what
 * `attempts` counts. Receivers de-duplicate by the delivery id header.
 *
 * The wait before a retry is a durable deadline (`nextAttemptAt` in context) woken by the
 * runtime's timer with `timer.due`; the guard `event.at >= nextAttemptAt` makes an early or
 * repeated wake-up do nothing.
 *
 * Not shown in docs/spec.md, chosen here:
 * - Attempts in all = max_retries + 1. The wait after the n-th failed attempt is
 *   min(30 s · 4^(n−1), 1 h): 30 s, 2 min, 8 min, 32 min, then 1 h (max_retries is at most 5).
 * - A timeout (timeout_ms) or a non-2xx answer is a failed attempt (status null when there was no
 *   answer). An attempt that cannot succeed by waiting (the endpoint was deleted or deactivated)
 *   reports `retryable: false` and the delivery fails at once.
 * - Retry resets `attempts` to 0 and clears `completedAt`; the last `responseStatus` and
 *   `errorMessage` stay until the next attempt replaces them.
 * - The effect crashing (a bug, not a failed attempt) fails the delivery at once; POST retry
 *   queues it again.
 */
import { assign, type DoneActorEvent, type ErrorActorEvent, fromPromise, type SnapshotFrom, setup } from 'xstate'
import { type CanApply, canApplyOn, type Refusal, type RefusalParams, refusalOf } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. 2: deliver became an invoked actor. */
export const MACHINE_VERSION = 2

// Not shown in docs/spec.md. 30 s lets a receiver that is restarting come back; ×4 per attempt reaches
// the 1 h cap at the fifth, so max_retries 5 spreads attempts over ~1 h 43 min.
export const FIRST_RETRY_DELAY_MS = 30_000
export const MAX_RETRY_DELAY_MS = 60 * 60_000

/** The wait after the n-th failed attempt (n ≥ 1). */
export const retryDelayMs = (n: number): number => Math.min(FIRST_RETRY_DELAY_MS * 4 ** Math.max(0, n - 1), MAX_RETRY_DELAY_MS)

export type WebhookDeliveryState = 'pending' | 'success' | 'retrying' | 'failed'

export interface WebhookDeliveryContext {
  id: string
  /** The endpoint's max_retries when the event was queued (0–5). */
  maxRetries: number
  attempts: number
  /** Bumped by each POST retry: the effect numbers attempts afresh in a new round. Absent (0) in old snapshots. */
  round?: number
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
  | { type: 'timer.due'; at: number; name?: string }
  /** POST .../deliveries/{id}/retry */
  | { type: 'delivery.retry'; at: number }

/** What the `deliver` effect is given. */
export interface DeliverInput {
  deliveryId: string
  /** 1 for the first attempt since queued (or since a POST retry). */
  attempt: number
  /** Which POST-retry round this attempt belongs to (0 before any). */
  round: number
}

/** What one attempt reports: `at` is when it ended on the service clock (machines read no clock). */
export interface DeliverOutput {
  ok: boolean
  at: number
  status: number | null
  error: string | null
  /** False when waiting cannot help (endpoint deleted or deactivated). */
  retryable: boolean
  /** The number the attempt was sent as (it may run ahead of `attempts + 1` after a crash); absent when nothing was sent. */
  attempt?: number
}

/** Effects: invoked actors the runtime binding provides with `machine.provide({ actors })`. */
export const WEBHOOK_DELIVERY_EFFECTS = ['deliver'] as const
export type WebhookDeliveryEffect = (typeof WEBHOOK_DELIVERY_EFFECTS)[number]

/** The attempt number an outcome stands for: the one it was sent as, else the next by the count. */
const attemptOf = (context: WebhookDeliveryContext, event: unknown): number => outputOf(event)?.attempt ?? context.attempts + 1

const outputOf = (event: unknown): DeliverOutput | null => ((event as { type: string }).type.startsWith('xstate.done.actor.') ? (event as DoneActorEvent<DeliverOutput>).output : null)
const errorOf = (event: unknown): unknown => (event as Partial<ErrorActorEvent>).error
/** A crashed effect may carry the instant it failed at (the binding attaches it). */
const crashAt = (event: unknown): number | null => {
  const at = (errorOf(event) as { at?: unknown } | undefined)?.at
  return typeof at === 'number' ? at : null
}

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
  actors: {
    deliver: fromPromise<DeliverOutput, DeliverInput>(async () => {
      throw new Error('provided by the webhooks binding')
    }),
  },
  actions: {
    recordSuccess: assign(({ context, event }) => ({
      attempts: attemptOf(context, event),
      responseStatus: outputOf(event)?.status ?? null,
      errorMessage: null,
      completedAt: outputOf(event)?.at ?? null,
    })),
    recordFailure: assign(({ context, event }) => {
      const out = outputOf(event)
      return {
        attempts: attemptOf(context, event),
        responseStatus: out?.status ?? null,
        errorMessage: out ? (out.error ?? 'failed') : `delivery could not be attempted: ${String(errorOf(event))}`,
      }
    }),
    // Runs after recordFailure, so `attempts` already counts the attempt that just failed.
    // Only on an attempt's outcome (onDone), which always carries `at`.
    bookRetry: assign({ nextAttemptAt: ({ context, event }) => (outputOf(event)?.at ?? 0) + retryDelayMs(context.attempts) }),
    markFailed: assign({ completedAt: ({ event }) => outputOf(event)?.at ?? crashAt(event), nextAttemptAt: () => null }),
    clearDeadline: assign({ nextAttemptAt: () => null }),
    requeue: assign({ attempts: () => 0, round: ({ context }) => (context.round ?? 0) + 1, nextAttemptAt: () => null, completedAt: () => null }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    succeeded: ({ event }) => outputOf(event)?.ok === true,
    // Checked before recordFailure: one more attempt is allowed after this failed one.
    retryLeft: ({ context, event }) => outputOf(event)?.retryable === true && attemptOf(context, event) < context.maxRetries + 1,
    isDue: ({ context, event }) => context.nextAttemptAt !== null && typeof event.at === 'number' && event.at >= context.nextAttemptAt,
  },
}).createMachine({
  id: 'webhookDelivery',
  description: 'One legacy webhook delivery and its retries.',
  context: ({ input }) => ({
    id: input.id,
    maxRetries: Math.min(5, Math.max(0, Math.floor(input.maxRetries))),
    attempts: 0,
    round: 0,
    nextAttemptAt: null,
    responseStatus: null,
    errorMessage: null,
    completedAt: null,
    lastRefusal: null,
  }),
  initial: 'pending',
  states: {
    pending: {
      description: 'Queued: an attempt is being made (the deliver effect runs).',
      invoke: {
        id: 'deliver',
        src: 'deliver',
        input: ({ context }) => ({ deliveryId: context.id, attempt: context.attempts + 1, round: context.round ?? 0 }),
        onDone: [
          { guard: 'succeeded', target: 'success', actions: 'recordSuccess' },
          { guard: 'retryLeft', target: 'retrying', actions: ['recordFailure', 'bookRetry'] },
          { target: 'failed', actions: ['recordFailure', 'markFailed'] },
        ],
        onError: { target: 'failed', actions: ['recordFailure', 'markFailed'] },
      },
      on: { 'delivery.retry': onlyFailed('pending') },
    },
    retrying: {
      description: 'The last attempt failed; the next one is due at nextAttemptAt (a durable timer).',
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
export function canApply(target: WebhookDeliverySnapshot | WebhookDeliveryState, event: WebhookDeliveryEvent | WebhookDeliveryEvent['type']): CanApply {
  return canApplyOn(webhookDeliveryMachine, target, event)
}

/** The durable waits of a snapshot (one timer: the next attempt). */
export function deliveryDeadlines(s: { value: unknown; context: WebhookDeliveryContext }): { name: string; at: number }[] {
  return s.value === 'retrying' && s.context.nextAttemptAt !== null ? [{ name: 'retry', at: s.context.nextAttemptAt }] : []
}
