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
 */
import type { CallContext, CallEvent, CallTransfer, TransferCallInput, TransferCallOutput } from './call-types'

/** The live states a transfer adds; the call's status in them is `connected`. */
export const TRANSFER_STATES = ['transferring', 'transferred'] as const

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

export const transferStartedAt: Update = (context, event) =>
  context.transfer ? { ...context.transfer, startedAt: context.transfer.startedAt ?? (event as { output?: TransferCallOutput }).output?.at ?? null } : null

/** The network would not take the hand-off: over before it began, the agent carries on. */
export const transferRefusedBy: Update = (context, event) => {
  const error = (event as { error?: unknown }).error
  const at = failedAt(error, context.transfer?.requestedAt ?? 0)
  return context.transfer ? { ...context.transfer, endedAt: at, outcome: 'failed' as const, error: reasonOf(error) } : null
}

export const transferAnsweredAt: Update = (context, event) =>
  context.transfer && context.transfer.answeredAt === null ? { ...context.transfer, answeredAt: (event as { at: number }).at } : (context.transfer ?? null)

export const transferEndedBy: Update = (context, event) => {
  const e = event as Extract<CallEvent, { type: 'transfer.ended' }>
  const t = context.transfer
  if (!t) return null
  const answeredAt = t.answeredAt ?? (e.outcome === 'answered' ? e.at - (e.seconds ?? 0) * 1000 : null)
  const seconds = e.seconds ?? (answeredAt === null ? 0 : Math.max(0, Math.round((e.at - answeredAt) / 1000)))
  return { ...t, answeredAt, endedAt: e.at, outcome: e.outcome, seconds: e.outcome === 'answered' ? seconds : 0, error: e.error ?? null }
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

/** The transfer's states, spread into the call chart beside `connected`. */
export const transferStates = {
  transferring: {
    description: "The network is handing the caller to the transfer's number (status connected).",
    invoke: {
      id: 'transferCall' as const,
      src: 'transferCall' as const,
      input: ({ context }: { context: CallContext }): TransferCallInput => ({
        id: context.id,
        attempt: context.attempt,
        callRef: context.callRef,
        destination: { name: context.transfer!.name, phoneNumber: context.transfer!.phoneNumber, mode: context.transfer!.mode },
      }),
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
