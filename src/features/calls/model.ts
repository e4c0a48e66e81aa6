/**
 * Call (v1) request and response schemas: docs/spec.md Call resource, Calls endpoints and Limits.
 * Shapes docs/spec.md leaves "not shown" (retry, extract, variables, overrides, scheduledFor) are
 * chosen here and described in docs/api/calls.md.
 */
import { t } from 'elysia'
import { BodyInt } from '../../http/body-types'
import { pageQuery } from '../../http/pagination'

/** docs/spec.md Limits: call purpose. */
export const PURPOSE_MAX = 300
/** docs/spec.md Limits: collectFields (a call's `extract` is the same list). */
export const EXTRACT_MAX = 30
/** Our choice: a retry policy beyond five tries or a day apart stops being a retry and becomes a campaign. */
export const RETRY_MAX_ATTEMPTS = 5
export const RETRY_DELAY_MINUTES = { min: 1, max: 24 * 60 } as const
/** Our choice: variables are short values spoken or shown to the agent, like sequence enrolment variables (docs/spec.md: 20, name 60, value 300). */
export const VARIABLES_MAX = 20
export const VARIABLE_NAME_MAX = 60
export const VARIABLE_VALUE_MAX = 300
/** Our choice: how far ahead a call may be booked (a quarter; longer plans belong to a campaign). */
export const SCHEDULE_MAX_DAYS = 90
/** docs/spec.md Conventions 6 names the header; the body member takes the same bounded form. */
export const IDEMPOTENCY_KEY_MAX = 255

const FIELD_TYPES = ['text', 'number', 'boolean', 'date'] as const
const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])
const MetadataValue = t.Union([t.String(), t.Number(), t.Boolean()])

export const ExtractField = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64 }),
    type: t.Optional(
      t.Union(
        FIELD_TYPES.map((v) => t.Literal(v)),
        { description: 'text (default), number, boolean or date (YYYY-MM-DD)' },
      ),
    ),
    description: t.Optional(Nullable(t.String({ maxLength: 500 }))),
    choices: t.Optional(Nullable(t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }))),
  },
  { additionalProperties: false },
)

export const PlaceCall = t.Object(
  {
    to: t.String({ minLength: 1, maxLength: 40, description: "the customer's number in any common spelling; normalised to E.164 like the contact importer" }),
    purpose: t.String({ minLength: 1, maxLength: PURPOSE_MAX, description: 'why the agent calls; spoken first' }),
    agent: t.Optional(t.String({ minLength: 1, maxLength: 60, description: 'agent id (ag_…) or name; needed when several agents answer the phone' })),
    from: t.Optional(t.String({ minLength: 1, maxLength: 40, description: "one of the agent's numbers; default: the agent's number" })),
    idempotencyKey: t.Optional(
      t.String({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX, description: 'same as the Idempotency-Key header; with the header it is ignored (not part of the request the key is bound to)' }),
    ),
    reference: t.Optional(Nullable(t.String({ maxLength: 200, description: 'your own reference, returned untouched' }))),
    metadata: t.Optional(Nullable(t.Record(t.String(), MetadataValue, { description: 'returned untouched; customer metadata rules: 50 keys of 1–40 characters, strings ≤ 500, 8 KB in all' }))),
    variables: t.Optional(
      t.Record(t.String(), MetadataValue, { description: `up to ${VARIABLES_MAX} values the agent may use, names ≤ ${VARIABLE_NAME_MAX} and strings ≤ ${VARIABLE_VALUE_MAX} characters` }),
    ),
    extract: t.Optional(t.Array(ExtractField, { maxItems: EXTRACT_MAX, description: "fields read from the transcript after the call; default: the agent's collectFields" })),
    retry: t.Optional(
      Nullable(
        t.Object(
          {
            maxAttempts: BodyInt({ minimum: 1, maximum: RETRY_MAX_ATTEMPTS, description: 'tries in all, the first included' }),
            delayMinutes: BodyInt({ minimum: RETRY_DELAY_MINUTES.min, maximum: RETRY_DELAY_MINUTES.max, description: 'wait after a missed try' }),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    scheduledFor: t.Optional(Nullable(t.String({ description: `ISO 8601 instant in the future, at most ${SCHEDULE_MAX_DAYS} days ahead; the call gets an sch_ id` }))),
    overrides: t.Optional(t.Object({ voice: t.Optional(t.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
)
export type PlaceCall = typeof PlaceCall.static

const TranscriptItem = t.Object({
  speaker: t.Union([t.Literal('agent'), t.Literal('customer'), t.Literal('team')]),
  text: t.String(),
  at: t.String(),
})

const Recording = t.Object({ url: t.String(), expiresAt: t.String(), ready: t.Boolean() })

const FieldValue = t.Union([t.String(), t.Number(), t.Boolean()])

/** A live call's transfer (docs/api/calls.md "Transfer"); null when none was asked. */
export const CallTransfer = t.Object(
  {
    to: t.String({ description: "the destination's name, as the agent has it" }),
    phoneNumber: t.String({ description: 'E.164' }),
    mode: t.Union([t.Literal('cold'), t.Literal('warm')]),
    by: t.Union([t.Literal('agent'), t.Literal('api')], { description: "agent: its transfer_call tool; api: POST /calls/{id}/transfer (or the console's Transfer button)" }),
    requestedAt: t.String(),
    startedAt: Nullable(t.String({ description: "the network took the hand-off (warm: placed the person's leg): the person's phone rings" })),
    answeredAt: Nullable(t.String()),
    endedAt: Nullable(t.String()),
    outcome: Nullable(
      t.Union(
        ['answered', 'no_answer', 'busy', 'declined', 'failed'].map((o) => t.Literal(o)),
        { description: 'null while under way; declined: a warm transfer the person heard and did not take' },
      ),
    ),
    seconds: t.Number({ description: "the person's leg, answered to its end: billed as call minutes" }),
    error: Nullable(t.String()),
  },
  { description: 'null when the call was never transferred' },
)

const callMembers = {
  id: t.String(),
  callRef: Nullable(t.String()),
  reference: Nullable(t.String()),
  metadata: Nullable(t.Record(t.String(), MetadataValue)),
  attempt: t.Integer(),
  status: t.Union(['scheduled', 'ringing', 'connected', 'completed', 'missed', 'failed', 'cancelled'].map((s) => t.Literal(s))),
  direction: t.Union([t.Literal('outbound'), t.Literal('inbound')]),
  phone: Nullable(t.String()),
  agent: t.Object({ id: t.String(), name: t.String() }),
  scheduledFor: Nullable(t.String()),
  startedAt: Nullable(t.String()),
  answeredAt: Nullable(t.String()),
  endedAt: Nullable(t.String()),
  seconds: t.Number(),
  hangup: Nullable(t.String()),
  variables: t.Record(t.String(), MetadataValue),
  summary: Nullable(t.String()),
  fields: t.Record(t.String(), FieldValue),
  analysedAt: Nullable(t.String()),
  error: Nullable(t.String()),
  transfer: Nullable(CallTransfer),
}

/** The list form: docs/spec.md omits transcript, recording, retryScheduledFor and from. */
export const CallListItem = t.Object(callMembers)

const Spread = Nullable(t.Object({ p50: t.Number(), p95: t.Number(), max: t.Number() }))
/** Per-call voice latency: p50/p95/max over the call's turns, ms; null where no turn had that stage. */
export const CallLatency = t.Object(
  {
    turns: t.Integer({ description: 'agent turns answered after the caller spoke' }),
    endpointingMs: Spread,
    sttMs: Spread,
    sttQueueMs: t.Union([t.Object({ p50: t.Number(), p95: t.Number(), max: t.Number() }), t.Null()], {
      description: 'of sttMs, the wait for a free speech decoder (the local decoders are shared); null with a vendor engine',
    }),
    llmFirstTokenMs: Spread,
    ttsFirstByteMs: Spread,
    toFirstAudioMs: t.Union([t.Object({ p50: t.Number(), p95: t.Number(), max: t.Number() }), t.Null()], { description: "end of the caller's speech → first agent audio sent (server side)" }),
    toFirstHeardMs: t.Union([t.Object({ p50: t.Number(), p95: t.Number(), max: t.Number() }), t.Null()], {
      description: "end of the caller's speech → the line echoed the first mark (what the caller experienced)",
    }),
    overlaps: t.Object(
      {
        resumed: t.Integer({ description: 'stopped the agent, which then resumed its sentence (a backchannel, a cough)' }),
        taken: t.Integer({ description: 'stopped the agent and took the turn (answered)' }),
        talkedOver: t.Integer({ description: 'did not stop the agent (its own echo, a click, or a missed interruption)' }),
        talkedInto: t.Integer({ description: 'pauses the agent talked into: the caller went on within 1 s of the first audio of its answer' }),
      },
      { description: "how the caller's speech over the agent ended (docs/api/voice.md, Barge-in)" },
    ),
  },
  { description: 'null when no media stream carried the call' },
)

export const Call = t.Object({
  ...callMembers,
  latency: Nullable(CallLatency),
  from: Nullable(t.String()),
  transcript: t.Array(TranscriptItem),
  recording: Nullable(Recording),
  retryScheduledFor: Nullable(t.String()),
})
export type Call = typeof Call.static

/**
 * The statuses a listed try can have: docs/spec.md's five, and `cancelled` (a try ended by DELETE while
 * ringing stays listed). `scheduled` is not one: waiting calls are not listed.
 */
export const LISTED_STATUSES = ['ringing', 'connected', 'completed', 'missed', 'failed', 'cancelled'] as const

export const ListCallsQuery = t.Object({
  ...pageQuery(100, 25),
  agent: t.Optional(t.String({ pattern: '^ag_[0-9a-z]+$', description: 'an agent id (ag_…)' })),
  status: t.Optional(
    t.Union(
      LISTED_STATUSES.map((s) => t.Literal(s)),
      { description: LISTED_STATUSES.join(', ') },
    ),
  ),
  reference: t.Optional(t.String({ maxLength: 200, description: 'the reference the call was placed with (at most 200 characters)' })),
  since: t.Optional(t.String({ description: 'ISO 8601 instant or date (inclusive), on startedAt or the booking time' })),
  until: t.Optional(t.String({ description: 'ISO 8601 instant or date (exclusive)' })),
})

export const SummaryQuery = t.Object({
  days: t.Optional(t.Integer({ minimum: 1, maximum: 90, default: 7, description: '1–90 (default 7); 1 gives hourly buckets' })),
})

export const TransferCall = t.Object(
  {
    destination: t.String({ minLength: 1, maxLength: 60, description: "the name of one of the agent's transfers (case-insensitive)" }),
  },
  { additionalProperties: false },
)
export type TransferCall = typeof TransferCall.static
