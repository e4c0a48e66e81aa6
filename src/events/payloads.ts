/**
 * The `data` of every event (the payloads docs/spec.md does not show are our choice; docs/api/webhooks.md
 * lists them) and the envelopes each webhook surface sends, as schemas: they are
 * published in the OpenAPI documents as callbacks of the routes that register webhooks, and
 * publishers can type their `data` from them.
 */
import { type Static, type TSchema, t } from 'elysia'
import { EVENT_DESCRIPTIONS, type EventType } from './catalogue'

const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()])
const Instant = t.String({ description: 'ISO 8601 UTC timestamp' })
const Channel = t.String({ description: 'chatapp, web, botapp, voice or email' })
const AgentRef = t.Object({ id: t.String(), name: t.String() })

const conversation = {
  conversationId: t.String({ description: 'conv_…' }),
  channel: Channel,
  test: t.Boolean({ description: 'true for a test chat' }),
  simulated: t.Optional(t.Literal(true, { description: 'present on a simulations run’s conversation (then `test` is true too)' })),
}

/** A call as GET /calls/{id} answers it (docs/spec.md Call); `call.analysed` carries exactly this. */
export const CallPayload = t.Object(
  {
    id: t.String({ description: 'out_… or sch_…' }),
    callRef: Nullable(t.String()),
    reference: Nullable(t.String()),
    metadata: Nullable(t.Record(t.String(), t.Unknown())),
    attempt: t.Integer(),
    status: t.String({ description: 'scheduled, ringing, connected, completed, missed, failed, cancelled' }),
    direction: t.String(),
    phone: Nullable(t.String()),
    from: Nullable(t.String()),
    agent: AgentRef,
    scheduledFor: Nullable(Instant),
    startedAt: Nullable(Instant),
    answeredAt: Nullable(Instant),
    endedAt: Nullable(Instant),
    seconds: t.Number(),
    hangup: Nullable(t.String()),
    variables: t.Record(t.String(), t.Unknown()),
    summary: Nullable(t.String()),
    fields: t.Record(t.String(), t.Unknown()),
    transcript: t.Array(t.Object({ speaker: t.String(), text: t.String(), at: Instant })),
    recording: Nullable(t.Object({ url: t.String(), expiresAt: Instant, ready: t.Boolean() })),
    analysedAt: Nullable(Instant),
    retryScheduledFor: Nullable(Instant),
    error: Nullable(t.String()),
    transfer: t.Optional(
      Nullable(
        t.Object(
          {
            to: t.String({ description: "the destination's name" }),
            phoneNumber: t.String(),
            mode: t.String({ description: 'cold or warm' }),
            by: t.String({ description: 'agent (its transfer_call tool) or api' }),
            requestedAt: Instant,
            startedAt: Nullable(Instant),
            answeredAt: Nullable(Instant),
            endedAt: Nullable(Instant),
            outcome: Nullable(t.String({ description: 'answered, no_answer, busy or failed; null while under way' })),
            seconds: t.Number(),
            error: Nullable(t.String()),
          },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  { additionalProperties: true, description: 'the call object as in GET /calls/{id}' },
)

export const EVENT_PAYLOADS = {
  'lead.captured': t.Object({
    ...conversation,
    name: Nullable(t.String()),
    email: Nullable(t.String()),
    phone: Nullable(t.String({ description: 'E.164 when readable' })),
    note: Nullable(t.String()),
  }),
  'conversation.escalated': t.Object({ ...conversation, reason: Nullable(t.String()), status: t.String({ description: 'the conversation status after the move' }) }),
  'conversation.resolved': t.Object({ ...conversation, status: t.String() }),
  'call.completed': t.Object(
    {
      id: t.String(),
      attempt: t.Integer(),
      status: t.String({ description: 'completed, missed or failed' }),
      direction: t.String(),
      phone: Nullable(t.String()),
      agent: AgentRef,
      reference: Nullable(t.String()),
      startedAt: Nullable(Instant),
      answeredAt: Nullable(Instant),
      endedAt: Nullable(Instant),
      seconds: t.Number(),
      hangup: Nullable(t.String()),
    },
    { additionalProperties: true, description: 'outcome and duration, sent the moment the call ends (summary and fields follow in call.analysed)' },
  ),
  'call.analysed': CallPayload,
  'call.transfer_ended': CallPayload,
  'campaign.finished': t.Object(
    {
      id: t.String({ description: 'cmp_…' }),
      agent: t.String(),
      name: t.String(),
      kind: t.String({ description: 'chatapp or voice' }),
      status: t.String({ description: 'sent, failed or cancelled' }),
      template: Nullable(t.String()),
      purpose: Nullable(t.String()),
      counts: t.Record(t.String(), t.Integer(), { description: 'recipients, sent, delivered, read, replied, failed, skipped' }),
      startedAt: Nullable(Instant),
      finishedAt: Nullable(Instant),
      lastError: Nullable(t.String()),
    },
    { additionalProperties: true, description: 'the campaign as GET /campaigns/{id} answers it' },
  ),
  'simulation.finished': t.Object(
    {
      id: t.String({ description: 'srun_…' }),
      suite: t.String(),
      agent: t.String(),
      target: t.Union([t.Literal('draft'), t.Integer()]),
      status: t.String({ description: 'done or cancelled' }),
      passed: Nullable(t.Boolean({ description: 'done: every call passed; null when cancelled' })),
      totals: t.Record(t.String(), t.Integer(), { description: 'calls, finished, passed, failed' }),
      startedAt: Nullable(Instant),
      finishedAt: Nullable(Instant),
    },
    { additionalProperties: true, description: 'the run as GET /simulations/runs/{id} answers it, its results left out' },
  ),
  'message.received': t.Object({
    conversationId: t.String(),
    messageId: t.String({ description: 'msg_…' }),
    receivedAt: Instant,
    channel: Channel,
    customer: t.Object({ id: Nullable(t.String()), phone: Nullable(t.String()) }),
    parts: t.Array(t.Record(t.String(), t.Unknown()), { description: 'as in a message: { type: text, text } or { type: image, url, alt }' }),
  }),
  // Published by the conversation engine once per agent reply in a chat (not on calls).
  'chat.message.completed': t.Object({
    ...conversation,
    messageId: t.String({ description: 'msg_… of the reply' }),
    text: t.String({ description: 'the reply the agent sent' }),
    completedAt: Instant,
  }),
  'voice.call.ended': t.Object({
    callId: t.String(),
    status: t.String(),
    hangup: Nullable(t.String()),
    seconds: t.Number(),
    phone: Nullable(t.String()),
    endedAt: Instant,
  }),
} satisfies Record<EventType, TSchema>

export type EventPayload<E extends EventType> = Static<(typeof EVENT_PAYLOADS)[E]>

/** v1 body: `{ event, sentAt, data }` (docs/spec.md Events rule 3). */
export const v1Envelope = (type: EventType) => t.Object({ event: t.Literal(type), sentAt: Instant, data: EVENT_PAYLOADS[type] }, { description: `${type}: ${EVENT_DESCRIPTIONS[type]}` })

/** Legacy body (not shown in docs/spec.md; ours): the event id, type, time, agent and the same data. */
export const legacyEnvelope = (type: EventType) =>
  t.Object(
    {
      id: t.String({ description: 'the event id (also in x-service-event-id); the same on every retry' }),
      event_type: t.Literal(type),
      created_at: Instant,
      agent_id: Nullable(t.String()),
      data: EVENT_PAYLOADS[type],
    },
    { description: `${type}: ${EVENT_DESCRIPTIONS[type]}` },
  )
