/**
 * Telnyx Call Control webhooks as the telephony port's events
 * (https://developers.telnyx.com/docs/voice/programmable-voice/receiving-webhooks; each is
 * `{ data: { record_type: 'event', event_type, id, occurred_at, payload }, meta }`). A call of ours
 * carries `client_state` (base64 JSON, set on the dial and on a transfer's new leg), which Telnyx
 * echoes on every webhook of that leg: it names the try, how machines are detected, and the leg.
 */
import type { TransferOutcome, UnansweredHangup } from '../../../machines/call'
import type { AnsweredBy } from './port'

/** What a leg of ours carries in `client_state`. */
export interface LegState {
  /** The call's id and attempt. */
  c: string
  a: number
  /** `detect`: a machine ends the try (the answer waits for the verdict); `drop`: a machine gets the voicemail; absent: no detection. */
  m?: 'detect' | 'drop'
  /** `transfer`: the person's leg of a cold transfer; `warm`: the person's leg of a warm one, briefed before the join. */
  l?: 'transfer' | 'warm'
  /** Warm: the brief the person hears once they answer (carried here so any instance can say it). */
  b?: string
  /** Warm: `bye`, the leg's last words are being said; it is hung up once they end. */
  e?: 'bye'
  /** Our number the leg is on: its own carrier account, if it has one, signs the leg's webhooks. */
  n?: string
}

export const encodeLegState = (s: LegState): string => Buffer.from(JSON.stringify(s)).toString('base64')

export function decodeLegState(value: unknown): LegState | null {
  if (typeof value !== 'string' || !value) return null
  try {
    const s: unknown = JSON.parse(Buffer.from(value, 'base64').toString('utf8'))
    if (!s || typeof s !== 'object') return null
    const o = s as Record<string, unknown> // cast: a parsed JSON object, each member checked below
    if (typeof o.c !== 'string' || !Number.isInteger(o.a)) return null
    return {
      c: o.c,
      a: Number(o.a),
      ...(o.m === 'detect' || o.m === 'drop' ? { m: o.m } : {}),
      ...(o.l === 'transfer' || o.l === 'warm' ? { l: o.l } : {}),
      ...(typeof o.b === 'string' ? { b: o.b } : {}),
      ...(o.e === 'bye' ? { e: 'bye' as const } : {}),
      ...(typeof o.n === 'string' ? { n: o.n } : {}),
    }
  } catch {
    return null
  }
}

export interface TelnyxWebhook {
  /** The event's id: a webhook Telnyx sends again (no 2xx in time) keeps it. */
  id: string | null
  eventType: string
  /** When it happened at Telnyx (epoch ms), or null when the body does not say. */
  occurredAt: number | null
  payload: Record<string, unknown>
}

/** The webhook's event type and payload, or null for a body that is not one. */
export function parseWebhook(body: string): TelnyxWebhook | null {
  try {
    const parsed: unknown = JSON.parse(body)
    const data = (parsed as { data?: { id?: unknown; event_type?: unknown; occurred_at?: unknown; payload?: unknown } } | null)?.data // cast: read defensively, each member checked
    if (!data || typeof data.event_type !== 'string' || !data.payload || typeof data.payload !== 'object') return null
    const occurredAt = typeof data.occurred_at === 'string' ? Date.parse(data.occurred_at) : Number.NaN
    return {
      id: typeof data.id === 'string' ? data.id : null,
      eventType: data.event_type,
      occurredAt: Number.isFinite(occurredAt) ? occurredAt : null,
      payload: data.payload as Record<string, unknown>, // cast: checked to be an object
    }
  } catch {
    return null
  }
}

/**
 * A hang-up's `hangup_cause` for a call that never connected, as the chart's reason, or null for
 * one that ends a connected call (`normal_clearing`) or that we asked for (`originator_cancel`).
 */
export function unansweredCause(cause: unknown): UnansweredHangup | null {
  switch (cause) {
    case 'user_busy':
      return 'busy'
    case 'timeout':
    case 'no_answer':
      return 'no_answer'
    case 'call_rejected':
      return 'rejected'
    case 'unallocated_number':
    case 'not_found':
    case 'destination_out_of_order':
    case 'invalid_number_format':
      return 'unreachable'
    default:
      return null
  }
}

/** A transfer leg's `hangup_cause` as the transfer's outcome: only an answered leg ends in `normal_clearing`. */
export function transferOutcome(cause: unknown): TransferOutcome {
  if (cause === 'normal_clearing') return 'answered'
  if (cause === 'user_busy') return 'busy'
  if (cause === 'timeout' || cause === 'no_answer') return 'no_answer'
  return 'failed'
}

/** `call.machine.detection.ended`'s `result` (human, machine, not_sure) as the port's verdict. */
export function machineVerdict(result: unknown): AnsweredBy {
  if (result === 'human') return 'human'
  if (result === 'machine') return 'machine'
  return 'unknown'
}

/**
 * A leg's seconds as its `call.hangup` reports them: from the payload's `start_time` to the event's
 * `occurred_at` (Telnyx sends no duration of its own), or undefined when either is missing.
 */
export function hangupSeconds(hook: Pick<TelnyxWebhook, 'occurredAt' | 'payload'>): number | undefined {
  const start = typeof hook.payload.start_time === 'string' ? Date.parse(hook.payload.start_time) : Number.NaN
  if (hook.occurredAt === null || !Number.isFinite(start) || hook.occurredAt < start) return undefined
  return Math.round((hook.occurredAt - start) / 1000)
}
