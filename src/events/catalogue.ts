/**
 * The event catalogue: every domain event type, which webhook surface may subscribe to it, and
 * one line on when it fires. The payload of each (`data`) is described in payloads.ts.
 *
 * - v1 webhooks (`events`): docs/spec.md's six (Events of v1 webhooks) plus `message.received`, which
 *   the reply endpoint refers to ("the conversationId of a message.received event"): a v1 caller
 *   must be able to receive it, and `call.transfer_ended` (a live call's transfer is over: call
 *   transfer, docs/api/calls.md). `*` means all of these, now and later.
 * - legacy endpoints (`event_types`): docs/spec.md shows `chat.message.completed` and
 *   `voice.call.ended` and leaves the full list to us: those two plus every v1 event, so a legacy
 *   integration is never cut off from an event the service emits.
 */

export const V1_EVENT_TYPES = [
  'lead.captured',
  'conversation.escalated',
  'conversation.resolved',
  'call.completed',
  'call.analysed',
  'call.transfer_ended',
  'campaign.finished',
  'message.received',
  'simulation.finished',
] as const
export type V1EventType = (typeof V1_EVENT_TYPES)[number]

export const LEGACY_ONLY_EVENT_TYPES = ['chat.message.completed', 'voice.call.ended'] as const

export const LEGACY_EVENT_TYPES = [...LEGACY_ONLY_EVENT_TYPES, ...V1_EVENT_TYPES] as const
export type LegacyEventType = (typeof LEGACY_EVENT_TYPES)[number]

/** Every type the bus records. */
export const EVENT_TYPES = LEGACY_EVENT_TYPES
export type EventType = LegacyEventType

/** `events: ['*']` on a v1 webhook: every v1 event, including ones added later. */
export const ALL_EVENTS = '*'

export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'lead.captured': 'the agent collected a name, email or phone from an interested person',
  'conversation.escalated': 'the agent handed a conversation to a person',
  'conversation.resolved': 'a teammate marked a conversation done',
  'call.completed': 'a call ended: outcome and duration, the moment it ends',
  'call.analysed': "a call's results are ready: summary, fields, transcript, recording link",
  'call.transfer_ended': "a live call's transfer is over: the person answered and their leg ended, or nobody answered (the call's `transfer`)",
  'campaign.finished': 'a broadcast or calling campaign finished',
  'message.received': 'a customer wrote on the chat app or the bot app (docs/api/webhooks.md)',
  'simulation.finished': 'a simulation run of a suite ended: done (passed or not) or cancelled',
  'chat.message.completed': 'the agent finished a reply in a chat (web, messaging app)',
  'voice.call.ended': 'a voice call ended (the legacy form of call.completed)',
}

export const isV1EventType = (type: string): type is V1EventType => (V1_EVENT_TYPES as readonly string[]).includes(type)
export const isLegacyEventType = (type: string): type is LegacyEventType => (LEGACY_EVENT_TYPES as readonly string[]).includes(type)

/**
 * What an event is about, by the member of `data` that names it: a call's events (its tries
 * included, and the legacy `voice.call.ended`) share the call, a conversation's share the
 * conversation. Webhook deliveries of one subject to one endpoint go out in the order the events
 * were dispatched (docs/api/webhooks.md "Order").
 */
const SUBJECT_OF: Record<EventType, readonly [kind: string, member: string]> = {
  'lead.captured': ['conversation', 'conversationId'],
  'conversation.escalated': ['conversation', 'conversationId'],
  'conversation.resolved': ['conversation', 'conversationId'],
  'message.received': ['conversation', 'conversationId'],
  'chat.message.completed': ['conversation', 'conversationId'],
  'call.completed': ['call', 'id'],
  'call.analysed': ['call', 'id'],
  'call.transfer_ended': ['call', 'id'],
  'voice.call.ended': ['call', 'callId'],
  'campaign.finished': ['campaign', 'id'],
  'simulation.finished': ['simulation', 'id'],
}

/** `call:<id>`, `conversation:<id>`…; null when the event names none (nothing to keep in order). */
export function subjectOf(event: { type: string; data: Record<string, unknown> }): string | null {
  const named = isLegacyEventType(event.type) ? SUBJECT_OF[event.type] : undefined
  const id = named ? event.data[named[1]] : undefined
  return named && typeof id === 'string' && id !== '' ? `${named[0]}:${id}` : null
}
