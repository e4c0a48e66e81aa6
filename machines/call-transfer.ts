/**
 * The call chart's transfer (docs/api/calls.md "Transfer"), composed into machines/call.ts: its
 * types, how each step changes the call's `transfer`, and its live states.
 *
 * A connected call asked to transfer (the agent's `transfer_call` tool, or POST
 * /calls/{id}/transfer) is `transferring` while the network hands it over (`transferCall`), then
 * `transferred`: the caller is with the person and the agent has left. Both are live states whose
 * status is `connected`. The media stream's own end is not the call's end there (the network
 * closes it on the hand-off); the network's end is, and the call ends `completed` with `hangup:
 * answered` (the spec's values: the caller was answered and the call ended normally). A hand-off
 * the network refuses goes back to `connected`, so the agent carries on. `transfer.ended` (the
 * person's leg is over, or nobody answered) emits `call.transfer_ended`; its `seconds` are billed
 * as call minutes.
 *
 * Warm (`mode: warm`): the caller stays with the agent while the network calls the person (a second
 * leg) and tells them who is waiting and why (`consulting`); the person takes the call
 * (`transfer.accepted`) and the network joins the two (`joining`, `joinTransfer`), the agent leaving
 * as in a cold transfer (`transferred`). A person who does not answer, is busy, or hears the brief
 * and does not take it ends the transfer there (`transfer.ended`: `no_answer`, `busy`, `declined`)
 * and the call is `connected` again: the agent tells the caller and goes on. While consulting our
 * media stream is still the caller's, so its end is the call's end, and the person's leg is hung up
 * (`endLeg`); a join the network refuses also hangs the leg up and goes back to the agent.
 */
import type { CallContext, CallEvent, CallTransfer, EndLegInput, JoinTransferInput, TransferCallInput, TransferCallOutput } from './call-types'

/** The live states a transfer adds; the call's status in them is `connected`. */
export const TRANSFER_STATES = ['consulting', 'joining', 'transferring', 'transferred'] as const
/** The transfer states where the network has taken our media stream away: its end is not the call's end. */
export const HANDED_OFF_STATES = ['joining', 'transferring', 'transferred'] as const

/** The error an effect rejected with, as words (EffectError carries a message). */
export const reasonOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof (error as { message?: unknown })?.message === 'string' ? (error as { message: string }).message : String(error)
/** The instant an effect failed at (EffectError carries it), else `fallback`. */
export const failedAt = (error: unknown, fallback: number): number => {
  const at = (error as { at?: unknown } | undefined)?.at
  return typeof at === 'number' ? at : fallback
}

type Update = (context: CallContext, event: unknown) => CallTransfer | null

export const transferOpen = (context: CallContext): boolean => !!context.transfer && context.transfer.outcome === null

export const transferRequested = (event: unknown): CallTransfer => {
  const e = event as Extract<CallEvent, { type: 'transfer.request' }>
  const { name, phoneNumber, mode } = e.destination
  return { name, phoneNumber, mode, by: e.by, requestedAt: e.at, startedAt: null, answeredAt: null, endedAt: null, outcome: null, seconds: 0, error: null }
}

export const transferStartedAt: Update = (context, event) => {
  const t = context.transfer
  if (!t) return null
  const output = (event as { output?: TransferCallOutput }).output
  return { ...t, startedAt: t.startedAt ?? output?.at ?? null, ...(output?.legRef ? { legRef: output.legRef } : {}) }
}

const legSeconds = (t: CallTransfer, at: number): number => (t.answeredAt === null ? 0 : Math.max(0, Math.round((at - t.answeredAt) / 1000)))

/** The network would not take the hand-off: over before it began, the agent carries on. */
export const transferRefusedBy: Update = (context, event) => {
  const error = (event as { error?: unknown }).error
  const at = failedAt(error, context.transfer?.requestedAt ?? 0)
  // A warm leg the person answered is billed even when the join then failed.
  return context.transfer ? { ...context.transfer, endedAt: at, outcome: 'failed' as const, seconds: legSeconds(context.transfer, at), error: reasonOf(error) } : null
}

export const transferAnsweredAt: Update = (context, event) => {
  const t = context.transfer
  if (!t) return null
  const { at, legRef } = event as { at: number; legRef?: string }
  return { ...t, answeredAt: t.answeredAt ?? at, ...(legRef && !t.legRef ? { legRef } : {}) }
}

export const transferEndedBy: Update = (context, event) => {
  const e = event as Extract<CallEvent, { type: 'transfer.ended' }>
  const t = context.transfer
  if (!t) return null
  const answeredAt = t.answeredAt ?? (e.outcome === 'answered' ? e.at - (e.seconds ?? 0) * 1000 : null)
  const seconds = e.seconds ?? (answeredAt === null ? 0 : Math.max(0, Math.round((e.at - answeredAt) / 1000)))
  return { ...t, answeredAt, endedAt: e.at, outcome: e.outcome, seconds: e.outcome === 'answered' ? seconds : 0, error: e.error ?? null }
}

/**
 * Warm: the person's leg ended before the two were joined. An answered leg that ends there was
 * the person hearing the brief and not taking the call: `declined`, its seconds billed.
 */
export const transferUnjoined: Update = (context, event) => {
  const e = event as Extract<CallEvent, { type: 'transfer.ended' }>
  const t = context.transfer
  if (!t) return null
  const outcome = e.outcome === 'answered' ? ('declined' as const) : e.outcome
  const answeredAt = t.answeredAt ?? (outcome === 'declined' && e.seconds !== undefined ? e.at - e.seconds * 1000 : null)
  const seconds = outcome === 'declined' ? (e.seconds ?? legSeconds({ ...t, answeredAt }, e.at)) : 0
  return { ...t, answeredAt, endedAt: e.at, outcome, seconds, error: e.error ?? null }
}

/** Warm: the caller left (or DELETE) while the person was being called: never joined, an answered leg billed. */
export const transferAbandoned: Update = (context, event) => {
  const t = context.transfer
  if (!t || t.outcome !== null) return t ?? null
  const at = (event as { at: number }).at
  return { ...t, endedAt: at, outcome: 'failed' as const, seconds: legSeconds(t, at), error: 'the caller left before the person was connected' }
}

/** The call ended with its transfer still open (nobody reported the leg): it ended with the call. */
export const transferClosedAt: Update = (context, event) => {
  const t = context.transfer
  if (!t || t.outcome !== null) return t ?? null
  const at = (event as { at: number }).at
  const answered = t.answeredAt !== null
  return {
    ...t,
    endedAt: at,
    outcome: answered ? ('answered' as const) : ('failed' as const),
    seconds: answered ? Math.max(0, Math.round((at - t.answeredAt!) / 1000)) : 0,
    error: answered ? null : 'the call ended before the transfer connected',
  }
}

/**
 * The call's end while a transfer is under way or done: the media stream's end is not it (the
 * hand-off closes our stream); the network's end or DELETE is, closing a transfer still open.
 */
const endsWhileTransferring = {
  'call.ended': [
    { guard: 'fromMedia' as const },
    { guard: 'transferOpen' as const, target: 'completed' as const, actions: ['endSpoken' as const, 'closeTransfer' as const, 'emitTransferEnded' as const, 'emitCompleted' as const] },
    { target: 'completed' as const, actions: ['endSpoken' as const, 'emitCompleted' as const] },
  ],
  'call.delete': [
    {
      guard: 'transferOpen' as const,
      target: 'completed' as const,
      actions: ['endSpoken' as const, 'closeTransfer' as const, 'emitTransferEnded' as const, 'markHangingUp' as const, 'hangUpLive' as const, 'emitCompleted' as const],
    },
    { target: 'completed' as const, actions: ['endSpoken' as const, 'markHangingUp' as const, 'hangUpLive' as const, 'emitCompleted' as const] },
  ],
}

export const legInput = ({ context }: { context: CallContext }): EndLegInput => ({
  id: context.id,
  attempt: context.attempt,
  legRef: context.transfer?.legRef ?? null,
  answered: context.transfer?.answeredAt != null,
})

const transferInput = ({ context }: { context: CallContext }): TransferCallInput => ({
  id: context.id,
  attempt: context.attempt,
  callRef: context.callRef,
  destination: { name: context.transfer!.name, phoneNumber: context.transfer!.phoneNumber, mode: context.transfer!.mode },
})

/** `connected`'s answer to a transfer request: a warm one calls the person first. */
export const transferRequest = [
  { guard: 'warmRequest' as const, target: 'consulting' as const, actions: 'startTransfer' as const },
  { target: 'transferring' as const, actions: 'startTransfer' as const },
]

/** While joining, the caller's end also hangs up the person waiting to be joined. */
const endsWhileJoining = {
  'call.ended': [
    { guard: 'fromMedia' as const },
    { target: 'completed' as const, actions: ['endSpoken' as const, 'transferAbandoned' as const, 'emitTransferEnded' as const, 'endLeg' as const, 'emitCompleted' as const] },
  ],
  'call.delete': {
    target: 'completed' as const,
    actions: ['endSpoken' as const, 'transferAbandoned' as const, 'emitTransferEnded' as const, 'markHangingUp' as const, 'hangUpLive' as const, 'endLeg' as const, 'emitCompleted' as const],
  },
}

/** The transfer's states, spread into the call chart beside `connected`. */
export const transferStates = {
  consulting: {
    description: 'Warm: the network calls the person and tells them who is waiting and why; the caller is still with the agent (status connected).',
    invoke: {
      id: 'transferCall' as const,
      src: 'transferCall' as const,
      input: transferInput,
      onDone: { actions: 'transferStarted' as const },
      // The network would not place the person's leg: the agent is still there.
      onError: { target: 'connected' as const, actions: ['transferRefused' as const, 'emitTransferEnded' as const] },
    },
    on: {
      // Our media stream is still the caller's here: its end is the call's end.
      'call.ended': { target: 'completed' as const, actions: ['endSpoken' as const, 'transferAbandoned' as const, 'emitTransferEnded' as const, 'endLeg' as const, 'emitCompleted' as const] },
      'call.delete': endsWhileJoining['call.delete'],
      'transfer.answered': { actions: ['transferStarted' as const, 'transferAnswered' as const] },
      'transfer.accepted': { target: 'joining' as const, actions: ['transferStarted' as const, 'transferAnswered' as const] },
      // No answer, busy, declined, or the leg failed: back to the agent, who tells the caller.
      'transfer.ended': { guard: 'transferOpen' as const, target: 'connected' as const, actions: ['transferUnjoined' as const, 'emitTransferEnded' as const] },
    },
  },
  joining: {
    description: 'Warm: the person took the call; the network joins the two and the agent leaves (status connected).',
    invoke: {
      id: 'joinTransfer' as const,
      src: 'joinTransfer' as const,
      input: ({ context }: { context: CallContext }): JoinTransferInput => ({ ...transferInput({ context }), legRef: context.transfer?.legRef ?? null }),
      onDone: { target: 'transferred' as const },
      // The join failed (the caller's line is gone at the network, or it said no): the person is let go, the agent carries on.
      onError: { target: 'connected' as const, actions: ['transferRefused' as const, 'emitTransferEnded' as const, 'endLeg' as const] },
    },
    on: {
      ...endsWhileJoining,
      // The person hung up at once: the leg is over, the caller's end follows from the network.
      'transfer.ended': { guard: 'transferOpen' as const, target: 'transferred' as const, actions: ['transferEnded' as const, 'emitTransferEnded' as const] },
    },
  },
  transferring: {
    description: "The network is handing the caller to the transfer's number (status connected).",
    invoke: {
      id: 'transferCall' as const,
      src: 'transferCall' as const,
      input: transferInput,
      onDone: { target: 'transferred' as const, actions: 'transferStarted' as const },
      // Refused (no line to hand over, the network said no): the agent is still there.
      onError: { target: 'connected' as const, actions: ['transferRefused' as const, 'emitTransferEnded' as const] },
    },
    on: {
      ...endsWhileTransferring,
      // The network may report the person before the effect's answer is stored.
      'transfer.answered': { target: 'transferred' as const, actions: ['transferStarted' as const, 'transferAnswered' as const] },
      'transfer.ended': { guard: 'transferOpen' as const, target: 'transferred' as const, actions: ['transferStarted' as const, 'transferEnded' as const, 'emitTransferEnded' as const] },
    },
  },
  transferred: {
    description: 'The caller is with the person; the agent has left (status connected). The network reports the end.',
    on: {
      ...endsWhileTransferring,
      'transfer.answered': { actions: 'transferAnswered' as const },
      'transfer.ended': { guard: 'transferOpen' as const, actions: ['transferEnded' as const, 'emitTransferEnded' as const] },
    },
  },
}
