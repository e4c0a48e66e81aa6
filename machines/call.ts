/**
 * Call status (SPEC.md "Call status"): one actor per call id, across every try of a call with
 * `retry`. The state is the status of the newest try; per-try rows live in the store.
 *
 * Not shown in SPEC.md, chosen here:
 * - `retry` input is `{ maxAttempts, delayMs }`: tries in all (1 = no retry) and the wait after a
 *   missed try. Only `missed` tries are retried; a `failed` (provider refusal) one is not.
 * - Outcomes of a ringing try: no_answer, busy, rejected, unreachable and voicemail (answering
 *   machine detected on pickup, before the agent speaks) are all `missed` with that `hangup`.
 *   A call whose machine was not detected is `connected` and ends `completed`.
 * - `connected` ends `completed` with `hangup: answered`, or `before_agent` when the customer hung
 *   up before the agent spoke; `seconds` counts from `answeredAt`.
 * - DELETE while ringing → `cancelled` (`hangup: cancelled`); DELETE while connected →
 *   `completed` (`hangup: cancelled`: the person was reached, so analysis still runs).
 *   Neither can retry. A later provider report for that try is ignored.
 * - DELETE of a waiting call (booked or a retry) emits no event: the caller asked and got the
 *   report. Opt-out or "never placeable" while waiting emits the last `call.analysed`.
 * - `attempt` moves to the next number when a retry rings, so while waiting the context still
 *   describes the missed try (`attempt` n, `retryScheduledFor` set), as the spec's event shows.
 * - Analysis: tries nobody spoke in (missed, failed, cancelled) are analysed at once
 *   (`analysedAt` = the end); a completed try asks for analysis and emits `call.analysed` on
 *   `analysis.done`, once.
 * - Whether the brought-number "cannot be ended" 409 applies is the HTTP layer's check.
 */
import { assign, setup, type SnapshotFrom } from 'xstate'
import { canApplyOn, refusalOf, type CanApply, type Refusal, type RefusalParams } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
export const MACHINE_VERSION = 1

export type CallState = 'created' | 'scheduled' | 'ringing' | 'connected' | 'completed' | 'missed' | 'failed' | 'cancelled'
export type EndedCallState = 'completed' | 'missed' | 'failed' | 'cancelled'
export type UnansweredHangup = 'no_answer' | 'busy' | 'rejected' | 'unreachable' | 'voicemail'
export type Hangup = UnansweredHangup | 'answered' | 'before_agent' | 'cancelled' | 'failed' | 'not_placed'

export interface RetryPolicy {
  /** Tries in all, first included (1 = never retried). */
  maxAttempts: number
  /** Wait after a missed try before the next one rings. */
  delayMs: number
}

export interface CallContext {
  id: string
  attempt: number
  retry: RetryPolicy | null
  scheduledFor: number | null
  /** When the next try will ring; the durable deadline of a retry wait. */
  retryScheduledFor: number | null
  callRef: string | null
  startedAt: number | null
  answeredAt: number | null
  endedAt: number | null
  seconds: number
  hangup: Hangup | null
  error: string | null
  analysedAt: number | null
  lastRefusal: Refusal | null
}

export interface CallInput {
  id: string
  /** When the call was accepted (POST). */
  at: number
  /** Null: ring now. A number: wait for that instant (durable timer). */
  scheduledFor?: number | null
  retry?: RetryPolicy | null
}

export type CallEvent =
  /** A durable timer woke the call; `at` is the timer's due instant or the clock's now. */
  | { type: 'timer.due'; at: number }
  | { type: 'call.placed'; at: number; callRef: string }
  | { type: 'call.answered'; at: number }
  | { type: 'call.unanswered'; at: number; hangup: UnansweredHangup }
  | { type: 'call.refused'; at: number; error: string }
  | { type: 'call.ended'; at: number; hangup?: 'answered' | 'before_agent' }
  | { type: 'call.delete'; at: number }
  | { type: 'contact.optedOut'; at: number; reason?: 'opted_out' | 'do_not_call' }
  | { type: 'call.unplaceable'; at: number; error: string }
  | { type: 'analysis.done'; at: number }

/** Effects the runtime implements with `machine.provide({ actions })`. */
export const CALL_EFFECTS = [
  'scheduleTry',
  'cancelScheduledTry',
  'placeCall',
  'openConversation',
  'hangUpCall',
  'emitCallCompleted',
  'requestAnalysis',
  'emitCallAnalysed',
] as const
export type CallEffect = (typeof CALL_EFFECTS)[number]

const noop = () => {}

/** The instant a waiting call is due: a pending retry, else the booked time. */
export const dueAt = (c: CallContext): number => c.retryScheduledFor ?? c.scheduledFor ?? 0

const alreadyEnded = (state: EndedCallState) => ({
  actions: {
    type: 'recordRefusal' as const,
    params: { state, message: `call already ended (${state}); there is nothing to cancel or end` },
  },
})

export const callMachine = setup({
  types: {
    context: {} as CallContext,
    events: {} as CallEvent,
    input: {} as CallInput,
  },
  actions: {
    scheduleTry: noop,
    cancelScheduledTry: noop,
    placeCall: noop,
    openConversation: noop,
    hangUpCall: noop,
    emitCallCompleted: noop,
    requestAnalysis: noop,
    emitCallAnalysed: noop,
    /** A new try rings: per-try fields start over; a retry takes the next attempt number. */
    startTry: assign(({ context, event }) => ({
      attempt: context.retryScheduledFor !== null ? context.attempt + 1 : context.attempt,
      retryScheduledFor: null,
      callRef: null,
      startedAt: event.at,
      answeredAt: null,
      endedAt: null,
      seconds: 0,
      hangup: null,
      error: null,
      analysedAt: null,
    })),
    recordCallRef: assign({ callRef: ({ context, event }) => (event.type === 'call.placed' ? event.callRef : context.callRef) }),
    markAnswered: assign({ answeredAt: ({ event }) => event.at }),
    /** A try that nobody spoke in: ended and analysed at once; a retry is booked if one remains. */
    endUnspoken: assign(({ context, event }, params: { hangup: Hangup; retry: boolean }) => ({
      endedAt: event.at,
      analysedAt: event.at,
      seconds: 0,
      hangup: event.type === 'call.unanswered' ? event.hangup : params.hangup,
      error:
        event.type === 'call.refused' || event.type === 'call.unplaceable'
          ? event.error
          : event.type === 'contact.optedOut'
            ? event.reason === 'do_not_call'
              ? 'the number was put on the do-not-call list before the call rang'
              : 'the person opted out before the call rang'
            : null,
      retryScheduledFor:
        params.retry && context.retry && context.attempt < context.retry.maxAttempts
          ? event.at + context.retry.delayMs
          : null,
    })),
    /** A try somebody answered ends; analysis follows. */
    endSpoken: assign(({ context, event }) => ({
      endedAt: event.at,
      seconds: context.answeredAt === null ? 0 : Math.max(0, Math.round((event.at - context.answeredAt) / 1000)),
      hangup: event.type === 'call.ended' ? (event.hangup ?? 'answered') : 'cancelled',
    })),
    markAnalysed: assign({ analysedAt: ({ event }) => event.at }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    isScheduled: ({ context }) => context.scheduledFor !== null,
    isDue: ({ context, event }) => typeof event.at === 'number' && event.at >= dueAt(context),
    retryBooked: ({ context }) => context.retryScheduledFor !== null,
    notAnalysed: ({ context }) => context.analysedAt === null,
  },
}).createMachine({
  id: 'call',
  description: 'One outbound call across all its tries; the state is the status of the newest try.',
  context: ({ input }) => ({
    id: input.id,
    attempt: 1,
    retry: input.retry ?? null,
    scheduledFor: input.scheduledFor ?? null,
    retryScheduledFor: null,
    callRef: null,
    startedAt: input.scheduledFor == null ? input.at : null,
    answeredAt: null,
    endedAt: null,
    seconds: 0,
    hangup: null,
    error: null,
    analysedAt: null,
    lastRefusal: null,
  }),
  initial: 'created',
  states: {
    created: {
      description: 'Transient: a booked call waits (scheduled), any other rings at once.',
      always: [{ guard: 'isScheduled', target: 'scheduled' }, { target: 'ringing' }],
    },
    scheduled: {
      description: 'Waiting to ring: booked for later, or a retry. The deadline is dueAt(context).',
      entry: 'scheduleTry',
      on: {
        // A stale, early or duplicate wake-up fails the guard and changes nothing.
        'timer.due': { guard: 'isDue', target: 'ringing', actions: 'startTry' },
        'call.delete': {
          target: 'cancelled',
          actions: [{ type: 'endUnspoken', params: { hangup: 'cancelled', retry: false } }, 'cancelScheduledTry'],
        },
        'contact.optedOut': {
          target: 'cancelled',
          actions: [{ type: 'endUnspoken', params: { hangup: 'not_placed', retry: false } }, 'cancelScheduledTry', 'emitCallAnalysed'],
        },
        'call.unplaceable': {
          target: 'failed',
          actions: [{ type: 'endUnspoken', params: { hangup: 'not_placed', retry: false } }, 'cancelScheduledTry', 'emitCallAnalysed'],
        },
      },
    },
    ringing: {
      description: 'The provider is dialling the customer; the call is in the inbox.',
      entry: ['placeCall', 'openConversation'],
      on: {
        'call.placed': { actions: 'recordCallRef' },
        'call.answered': { target: 'connected', actions: 'markAnswered' },
        'call.unanswered': {
          target: 'missed',
          actions: [{ type: 'endUnspoken', params: { hangup: 'no_answer', retry: true } }, 'emitCallAnalysed'],
        },
        'call.refused': {
          target: 'failed',
          actions: [{ type: 'endUnspoken', params: { hangup: 'failed', retry: false } }, 'emitCallAnalysed'],
        },
        // DELETE while live ends at once; no retry follows from `cancelled`.
        'call.delete': {
          target: 'cancelled',
          actions: [{ type: 'endUnspoken', params: { hangup: 'cancelled', retry: false } }, 'hangUpCall', 'emitCallAnalysed'],
        },
      },
    },
    connected: {
      description: 'The customer answered and is talking with the agent.',
      on: {
        'call.ended': { target: 'completed', actions: ['endSpoken', 'emitCallCompleted', 'requestAnalysis'] },
        'call.delete': { target: 'completed', actions: ['endSpoken', 'hangUpCall', 'emitCallCompleted', 'requestAnalysis'] },
      },
    },
    completed: {
      description: 'The try was answered and has ended; analysedAt is set once summary and fields are written.',
      on: {
        'analysis.done': { guard: 'notAnalysed', actions: ['markAnalysed', 'emitCallAnalysed'] },
        'call.delete': alreadyEnded('completed'),
      },
    },
    missed: {
      description: 'Nobody picked up (or busy, rejected, unreachable, voicemail). Rests here only when no retry remains.',
      always: { guard: 'retryBooked', target: 'scheduled' },
      on: { 'call.delete': alreadyEnded('missed') },
    },
    failed: {
      description: 'The provider refused the try, or a waiting try could never be placed (hangup not_placed, see error).',
      on: { 'call.delete': alreadyEnded('failed') },
    },
    cancelled: {
      description: 'Cancelled while waiting, ended by DELETE while ringing, or the person opted out before it rang.',
      on: { 'call.delete': alreadyEnded('cancelled') },
    },
  },
})

export type CallSnapshot = SnapshotFrom<typeof callMachine>

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(target: CallSnapshot | CallState, event: CallEvent | CallEvent['type']): CanApply {
  return canApplyOn(callMachine, target, event)
}
