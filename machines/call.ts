/**
 * Call status (docs/spec.md "Call status"): one actor per call id, across every try of a call with
 * `retry`. The state is the status of the newest try; per-try rows live in the store.
 *
 * Not shown in docs/spec.md, chosen here:
 * - `retry` input is `{ maxAttempts, delayMs }`: tries in all (1 = no retry) and the wait after a
 *   missed try. Only `missed` tries are retried; a `failed` (provider refusal) one is not.
 * - Outcomes of a ringing try: no_answer, busy, rejected, unreachable and voicemail (answering
 *   machine detected on pickup, before the agent speaks) are all `missed` with that `hangup`.
 *   A call whose machine was not detected is `connected` and ends `completed`.
 *   An agent with a voicemail message (voicemail drop) is `connected` to the machine, speaks its
 *   message after the beep and ends `completed` with `hangup: voicemail` (`call.ended`).
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
 *   (`analysedAt` = the end); a completed try runs `analyseCall` and emits `call.analysed` when it
 *   finishes (or gives up), once.
 * - Whether the brought-number "cannot be ended" 409 applies is the HTTP layer's check.
 * - `unplaced` input: a try whose row was stored but whose actor never was (the process died
 *   between the two) was never dialled and nothing will dial it; its actor is born `failed` with
 *   `hangup: not_placed`, the reason in `error`, and analysed at once.
 * - Transfer (docs/api/calls.md "Transfer"): its states, live with status `connected`, and how
 *   each step changes `transfer` are in machines/call-transfer.ts.
 */
import { assign, emit, fromPromise, type SnapshotFrom, setup, spawnChild } from 'xstate'
import {
  failedAt,
  legInput,
  reasonOf,
  transferAbandoned,
  transferAnsweredAt,
  transferClosedAt,
  transferEndedBy,
  transferOpen,
  transferRefusedBy,
  transferRequest,
  transferRequested,
  transferStartedAt,
  transferStates,
  transferUnjoined,
} from './call-transfer'
import type {
  AnalyseCallOutput,
  CallContext,
  CallEffectInput,
  CallEmitted,
  CallEvent,
  CallInput,
  CallState,
  EndedCallState,
  EndLegInput,
  HangUpInput,
  Hangup,
  JoinTransferInput,
  PlaceCallOutput,
  TransferCallInput,
  TransferCallOutput,
} from './call-types'
import { type CanApply, canApplyOn, type RefusalParams, refusalOf } from './refusal'

export { HANDED_OFF_STATES, TRANSFER_STATES } from './call-transfer'
export type * from './call-types'

/** Bump when the chart changes shape: persisted snapshots carry it. */
/** 2: effects became invoked actors, events leave through emit(), the deadline is callDeadlines(). */
/** (The transfer states only added states and an optional context member: every stored version-2 snapshot still reads.) */
export const MACHINE_VERSION = 2

/** The actor kind the runtime runs this chart as (the calls feature's actor.ts); in every stored key, so never renamed. */
export const CALL_KIND = 'call'

/**
 * Effects: invoked actors the binding (the calls feature's actor.ts) provides with `machine.provide({ actors })`.
 * - `placeCall` dials the try through the telephony port; its output is the provider's `callRef`,
 *   a rejection (the provider refused: docs/spec.md's 502) ends the try `failed` with the reason;
 * - `openConversation` puts the call in the inbox as a `voice` conversation;
 * - `hangUp` ends a live call at the provider (DELETE while ringing or connected); spawned, since
 *   the try has already ended when it runs;
 * - `analyseCall` writes summary and fields after an answered try; its end (done or failed) makes
 *   the results final (`analysedAt`) and emits `call.analysed`.
 * - `transferCall` hands the live call to the transfer's number at the network (cold: the caller
 *   is put through and our media stream closes; warm: the person's leg is placed and briefed);
 *   its output is the instant the network took it (warm: and the leg's reference), a rejection
 *   puts the call back with the agent. Warm: `joinTransfer` joins the caller to the person's leg,
 *   `endLeg` (spawned) hangs that leg up when the two were never joined.
 * Domain events leave through `emit()`: `call.completed` and `call.analysed`, each `{ id, attempt }`
 * of the try; the binding publishes them on the event bus with the call as GET answers it.
 */
export const CALL_EFFECTS = ['placeCall', 'openConversation', 'hangUp', 'analyseCall', 'transferCall', 'joinTransfer', 'endLeg'] as const
export type CallEffect = (typeof CALL_EFFECTS)[number]

/** The instant a waiting call is due: a pending retry, else the booked time. */
export const dueAt = (c: CallContext): number => c.retryScheduledFor ?? c.scheduledFor ?? 0

/** The durable deadline of a waiting call (the runtime turns it into a timer that sends `timer.due`). */
export function callDeadlines(s: { value: unknown; context: CallContext }): { name: string; at: number }[] {
  return s.value === 'scheduled' ? [{ name: 'ring', at: dueAt(s.context) }] : []
}

const alreadyEnded = (state: EndedCallState) => ({
  actions: {
    type: 'recordRefusal' as const,
    params: { state, message: `call already ended (${state}); there is nothing to cancel or end` },
  },
})

const effectInput = ({ context }: { context: CallContext }): CallEffectInput => ({ id: context.id, attempt: context.attempt })

export const callMachine = setup({
  types: {
    context: {} as CallContext,
    events: {} as CallEvent,
    input: {} as CallInput,
    emitted: {} as CallEmitted,
  },
  actors: {
    placeCall: fromPromise<PlaceCallOutput, CallEffectInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
    openConversation: fromPromise<void, CallEffectInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
    hangUp: fromPromise<void, HangUpInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
    analyseCall: fromPromise<AnalyseCallOutput, CallEffectInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
    transferCall: fromPromise<TransferCallOutput, TransferCallInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
    joinTransfer: fromPromise<TransferCallOutput, JoinTransferInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
    endLeg: fromPromise<void, EndLegInput>(async () => {
      throw new Error('provided by the calls binding')
    }),
  },
  actions: {
    /** A new try rings: per-try fields start over; a retry takes the next attempt number. */
    startTry: assign(({ context, event }) => ({
      attempt: context.retryScheduledFor !== null ? context.attempt + 1 : context.attempt,
      retryScheduledFor: null,
      callRef: null,
      startedAt: (event as { at: number }).at,
      answeredAt: null,
      endedAt: null,
      seconds: 0,
      hangup: null,
      error: null,
      analysedAt: null,
    })),
    recordCallRef: assign({
      callRef: ({ context, event }) => (event.type === 'call.placed' ? event.callRef : ((event as { output?: PlaceCallOutput }).output?.callRef ?? context.callRef)),
    }),
    markAnswered: assign({ answeredAt: ({ event }) => (event as { at: number }).at }),
    /** A try that nobody spoke in: ended and analysed at once; a retry is booked if one remains. */
    endUnspoken: assign(({ context, event }, params: { hangup: Hangup; retry: boolean }) => {
      const at = 'at' in event ? (event as { at: number }).at : failedAt((event as { error?: unknown }).error, context.startedAt ?? 0)
      const error =
        event.type === 'call.refused' || event.type === 'call.unplaceable'
          ? event.error
          : event.type === 'contact.optedOut'
            ? event.reason === 'do_not_call'
              ? 'the number was put on the do-not-call list before the call rang'
              : 'the person opted out before the call rang'
            : 'error' in event
              ? reasonOf((event as { error: unknown }).error)
              : null
      return {
        endedAt: at,
        analysedAt: at,
        seconds: 0,
        hangup: event.type === 'call.unanswered' ? event.hangup : params.hangup,
        error,
        retryScheduledFor: params.retry && context.retry && context.attempt < context.retry.maxAttempts ? at + context.retry.delayMs : null,
      }
    }),
    /** Born failed: the try was stored, its actor was not, so it was never dialled. */
    endUnplaced: assign(({ context }) => ({ endedAt: context.startedAt, analysedAt: context.startedAt, seconds: 0, hangup: 'not_placed' as const, error: context.unplaced ?? null })),
    /** A try somebody answered ends; analysis follows. */
    endSpoken: assign(({ context, event }) => {
      const at = (event as { at: number }).at
      return {
        endedAt: at,
        seconds: context.answeredAt === null ? 0 : Math.max(0, Math.round((at - context.answeredAt) / 1000)),
        hangup: event.type === 'call.ended' ? (event.hangup ?? 'answered') : 'cancelled',
        error: event.type === 'call.ended' ? (event.error ?? null) : context.error,
      }
    }),
    /** Results final: when the analysis finished (or gave up), on the service clock it reported. */
    markAnalysed: assign({
      analysedAt: ({ context, event }) => {
        const out = (event as { output?: unknown }).output as { at?: number } | undefined
        return out?.at ?? failedAt((event as { error?: unknown }).error, context.endedAt ?? 0)
      },
    }),
    hangUpLive: spawnChild('hangUp', {
      id: 'hangUp',
      input: ({ context }: { context: CallContext }) => ({ id: context.id, attempt: context.attempt, callRef: context.callRef, answered: context.answeredAt !== null }),
    }),
    /** The spawned hang-up is tracked in context, so its end is a change the runtime stores. */
    markHangingUp: assign({ hangingUp: () => true }),
    markHungUp: assign({ hangingUp: () => false }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
    startTransfer: assign({ transfer: ({ event }) => transferRequested(event) }),
    transferStarted: assign({ transfer: ({ context, event }) => transferStartedAt(context, event) }),
    /** The network would not take the hand-off: over before it began, the agent carries on. */
    transferRefused: assign({ transfer: ({ context, event }) => transferRefusedBy(context, event) }),
    transferAnswered: assign({ transfer: ({ context, event }) => transferAnsweredAt(context, event) }),
    transferEnded: assign({ transfer: ({ context, event }) => transferEndedBy(context, event) }),
    /** The call ended with its transfer still open (nobody reported the leg): it ended with the call. */
    closeTransfer: assign({ transfer: ({ context, event }) => transferClosedAt(context, event) }),
    transferUnjoined: assign({ transfer: ({ context, event }) => transferUnjoined(context, event) }),
    transferAbandoned: assign({ transfer: ({ context, event }) => transferAbandoned(context, event) }),
    /** Warm: the person's leg is let go (spawned: the state that asked has been left). */
    endLeg: spawnChild('endLeg', { id: 'endLeg', input: legInput }),
    emitTransferEnded: emit(({ context }) => ({ type: 'call.transfer_ended' as const, id: context.id, attempt: context.attempt })),
    emitCompleted: emit(({ context }) => ({ type: 'call.completed' as const, id: context.id, attempt: context.attempt })),
    emitAnalysed: emit(({ context }) => ({ type: 'call.analysed' as const, id: context.id, attempt: context.attempt })),
  },
  guards: {
    isScheduled: ({ context }) => context.scheduledFor !== null,
    isInbound: ({ context }) => context.inbound === true,
    isUnplaced: ({ context }) => typeof context.unplaced === 'string',
    cannotBePlaced: ({ event }) => (event as { error?: { code?: unknown } }).error?.code === 'not_placed',
    isDue: ({ context, event }) => typeof (event as { at?: unknown }).at === 'number' && (event as { at: number }).at >= dueAt(context),
    retryBooked: ({ context }) => context.retryScheduledFor !== null,
    notAnalysed: ({ context }) => context.analysedAt === null,
    fromMedia: ({ event }) => (event as { source?: unknown }).source === 'media',
    transferOpen: ({ context }) => transferOpen(context),
    warmRequest: ({ event }) => (event as { destination?: { mode?: unknown } }).destination?.mode === 'warm',
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
    callRef: input.callRef ?? null,
    startedAt: input.scheduledFor == null ? input.at : null,
    answeredAt: input.inbound ? input.at : null,
    inbound: input.inbound ?? false,
    ...(input.unplaced !== undefined ? { unplaced: input.unplaced, startedAt: input.at } : {}),
    endedAt: null,
    seconds: 0,
    hangup: null,
    error: null,
    analysedAt: null,
    hangingUp: false,
    lastRefusal: null,
  }),
  initial: 'created',
  // The hang-up outlives the state that started it; its end (done or failed: the network already
  // dropped the call) clears the flag wherever the call is by then.
  on: {
    'xstate.done.actor.hangUp': { actions: 'markHungUp' },
    'xstate.error.actor.hangUp': { actions: 'markHungUp' },
  },
  states: {
    created: {
      description: 'Transient: an inbound call is connected already, a booked call waits (scheduled), any other rings at once; a try stored without its actor before a crash is failed (unplaced).',
      always: [
        { guard: 'isUnplaced', target: 'failed', actions: ['endUnplaced', 'emitAnalysed'] },
        { guard: 'isInbound', target: 'connected' },
        { guard: 'isScheduled', target: 'scheduled' },
        { target: 'ringing' },
      ],
    },
    scheduled: {
      description: 'Waiting to ring: booked for later, or a retry. The durable deadline is dueAt(context) (callDeadlines).',
      on: {
        // A stale, early or duplicate wake-up fails the guard and changes nothing.
        'timer.due': { guard: 'isDue', target: 'ringing', actions: 'startTry' },
        'call.delete': { target: 'cancelled', actions: [{ type: 'endUnspoken', params: { hangup: 'cancelled', retry: false } }] },
        'contact.optedOut': { target: 'cancelled', actions: [{ type: 'endUnspoken', params: { hangup: 'not_placed', retry: false } }, 'emitAnalysed'] },
        'call.unplaceable': { target: 'failed', actions: [{ type: 'endUnspoken', params: { hangup: 'not_placed', retry: false } }, 'emitAnalysed'] },
      },
    },
    ringing: {
      description: 'The provider is dialling the customer; the call is in the inbox.',
      invoke: [
        {
          id: 'placeCall',
          src: 'placeCall',
          input: effectInput,
          onDone: { actions: 'recordCallRef' },
          onError: [
            // A waiting try whose call can no longer be placed (its agent or number went meanwhile):
            // docs/spec.md's `not_placed`, the reason in `error`.
            { guard: 'cannotBePlaced', target: 'failed', actions: [{ type: 'endUnspoken', params: { hangup: 'not_placed', retry: false } }, 'emitAnalysed'] },
            // The provider would not place the call (docs/spec.md: the POST answers 502; the call is failed).
            { target: 'failed', actions: [{ type: 'endUnspoken', params: { hangup: 'failed', retry: false } }, 'emitAnalysed'] },
          ],
        },
        { id: 'openConversation', src: 'openConversation', input: effectInput },
      ],
      on: {
        'call.placed': { actions: 'recordCallRef' },
        'call.answered': { target: 'connected', actions: 'markAnswered' },
        'call.unanswered': { target: 'missed', actions: [{ type: 'endUnspoken', params: { hangup: 'no_answer', retry: true } }, 'emitAnalysed'] },
        'call.refused': { target: 'failed', actions: [{ type: 'endUnspoken', params: { hangup: 'failed', retry: false } }, 'emitAnalysed'] },
        // DELETE while live ends at once; no retry follows from `cancelled`.
        'call.delete': { target: 'cancelled', actions: [{ type: 'endUnspoken', params: { hangup: 'cancelled', retry: false } }, 'markHangingUp', 'hangUpLive', 'emitAnalysed'] },
      },
    },
    connected: {
      description: 'The customer answered and is talking with the agent.',
      on: {
        'call.ended': { target: 'completed', actions: ['endSpoken', 'emitCompleted'] },
        'call.delete': { target: 'completed', actions: ['endSpoken', 'markHangingUp', 'hangUpLive', 'emitCompleted'] },
        'transfer.request': transferRequest,
      },
    },
    ...transferStates,
    completed: {
      description: 'The try was answered and has ended; analyseCall writes summary and fields, then analysedAt is set.',
      invoke: {
        id: 'analyseCall',
        src: 'analyseCall',
        input: effectInput,
        onDone: { guard: 'notAnalysed', actions: ['markAnalysed', 'emitAnalysed'] },
        // Analysis gave up (its own retries used): the results stand as they are, and are final.
        onError: { guard: 'notAnalysed', actions: ['markAnalysed', 'emitAnalysed'] },
      },
      on: { 'call.delete': alreadyEnded('completed') },
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
