/**
 * The call chart's types (machines/call.ts, machines/call-transfer.ts): its states, context,
 * input, events, the effects' inputs and outputs, and what it emits.
 */
import type { Refusal } from './refusal'

export type CallState = 'created' | 'scheduled' | 'ringing' | 'connected' | 'consulting' | 'joining' | 'transferring' | 'transferred' | 'completed' | 'missed' | 'failed' | 'cancelled'
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
  /** A hang-up (spawned on DELETE of a live call) is running. */
  hangingUp?: boolean
  /** The customer called us (it started connected; never placed, never retried). */
  inbound?: boolean
  /** Why a try stored without its actor was never placed (the `unplaced` input). */
  unplaced?: string | null
  /** The newest transfer of this try; absent or null when none was asked. */
  transfer?: CallTransfer | null
  lastRefusal: Refusal | null
}

export interface CallInput {
  id: string
  /** When the call was accepted (POST). */
  at: number
  /** Null: ring now. A number: wait for that instant (durable timer). */
  scheduledFor?: number | null
  retry?: RetryPolicy | null
  /** A call the customer made to our number, answered by the agent at `at`: it starts connected. */
  inbound?: boolean
  /** The network's reference of an inbound call (an outbound one learns its own when placed). */
  callRef?: string | null
  /** A try whose row outlived a crash without its actor: it starts failed with this reason, never dialled. */
  unplaced?: string
}

export type CallEvent =
  /** A durable timer woke the call; `at` is the timer's due instant or the clock's now. */
  | { type: 'timer.due'; at: number }
  | { type: 'call.placed'; at: number; callRef: string }
  | { type: 'call.answered'; at: number }
  | { type: 'call.unanswered'; at: number; hangup: UnansweredHangup }
  | { type: 'call.refused'; at: number; error: string }
  /**
   * `failed`: the media stream broke mid-call (protocol violation, lost socket, a speech provider down); the reason in `error`.
   * `voicemail`: a machine answered and the agent left its message after the beep (voicemail drop).
   * `source: 'media'`: the end came from the media stream, not the network (a transfer closes the stream and the call goes on).
   */
  | { type: 'call.ended'; at: number; hangup?: 'answered' | 'before_agent' | 'failed' | 'voicemail'; error?: string; source?: 'media' }
  /** Hand the connected call to a person (the agent's tool, or the API). */
  | { type: 'transfer.request'; at: number; destination: TransferDestination; by: 'agent' | 'api' }
  /** The person picked up (warm: `legRef`, their leg, when the network names it). */
  | { type: 'transfer.answered'; at: number; legRef?: string }
  /** Warm: the person heard who is waiting and why, and took the call. */
  | { type: 'transfer.accepted'; at: number; legRef?: string }
  /** The person's leg is over (`seconds` of it answered), or it never connected. */
  | { type: 'transfer.ended'; at: number; outcome: TransferOutcome; seconds?: number; error?: string }
  | { type: 'call.delete'; at: number }
  | { type: 'contact.optedOut'; at: number; reason?: 'opted_out' | 'do_not_call' }
  | { type: 'call.unplaceable'; at: number; error: string }
  /** The spawned hang-up ended (XState's own events for a child actor). */
  | { type: 'xstate.done.actor.hangUp' }
  | { type: 'xstate.error.actor.hangUp'; error: unknown }

export type TransferMode = 'cold' | 'warm'
/**
 * How a transfer ended: the person answered (and the leg is over), did not, was busy, heard the
 * warm brief and did not take the call (`declined`), or the network could not connect.
 */
export type TransferOutcome = 'answered' | 'no_answer' | 'busy' | 'declined' | 'failed'

export interface TransferDestination {
  name: string
  /** E.164 */
  phoneNumber: string
  mode: TransferMode
}

/** The call's transfer: to whom, who asked, when it happened and how it ended (instants on the service clock). */
export interface CallTransfer extends TransferDestination {
  by: 'agent' | 'api'
  requestedAt: number
  /** The network took the hand-off: the person's phone is ringing. */
  startedAt: number | null
  answeredAt: number | null
  endedAt: number | null
  outcome: TransferOutcome | null
  /** The person's leg, answered to its end: billed as call minutes like the caller's. */
  seconds: number
  error: string | null
  /** Warm: the network's reference of the person's leg (our second call), once placed. */
  legRef?: string | null
}

export interface TransferCallInput extends CallEffectInput {
  callRef: string | null
  destination: TransferDestination
}

export interface TransferCallOutput {
  at: number
  /** Warm: the person's leg the network placed. */
  legRef?: string
}

/** Warm: join the caller to the person's leg (the agent leaves). */
export interface JoinTransferInput extends TransferCallInput {
  legRef: string | null
}

/** Warm: hang up the person's leg (the call ended, or the join failed, before the two were joined). */
export interface EndLegInput extends CallEffectInput {
  legRef: string | null
  answered: boolean
}

/** What every effect is given: which call, which try. */
export interface CallEffectInput {
  id: string
  attempt: number
}

export interface PlaceCallOutput {
  callRef: string
}

/** When the analysis finished, on the service clock (machines read no clock). */
export interface AnalyseCallOutput {
  at: number
}

export interface HangUpInput extends CallEffectInput {
  callRef: string | null
  /** True once answered (the provider hangs up a live call and cancels a ringing one differently). */
  answered: boolean
}

/** Emitted domain events: the try they are about. */
export type CallEmitted =
  | { type: 'call.completed'; id: string; attempt: number }
  | { type: 'call.analysed'; id: string; attempt: number }
  | { type: 'call.transfer_ended'; id: string; attempt: number }
