/**
 * Legacy webhook schemas (docs/spec.md "Webhook endpoint (legacy)", "Webhooks (legacy)"). Shape errors
 * answer 422 (legacy validation shape); docs/spec.md's 400s (URL not https, invalid event types, 20
 * endpoints) are the service's, so `url` and `event_types` are only typed here.
 */
import { type Static, t } from 'elysia'
import { LEGACY_EVENT_TYPES } from '../../events/catalogue'
import { BodyInt } from '../../http/body-types'
import { MAX_URL_CHARS } from './targets'

// docs/spec.md: max_retries 0–5, default 3; timeout_ms default 5000.
export const DEFAULT_MAX_RETRIES = 3
export const MAX_MAX_RETRIES = 5
export const DEFAULT_TIMEOUT_MS = 5_000
// Not shown in docs/spec.md. Under 1 s a TLS handshake to a far region alone can fail it; past 30 s a
// receiver is holding the connection for work it should do after answering.
export const MIN_TIMEOUT_MS = 1_000
export const MAX_TIMEOUT_MS = 30_000
// A description is a label for people; 500 characters is a paragraph.
export const MAX_DESCRIPTION_CHARS = 500

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

const fields = {
  url: t.String({ maxLength: MAX_URL_CHARS, description: 'https only' }),
  event_types: t.Array(t.String(), { maxItems: LEGACY_EVENT_TYPES.length, description: `one or more of ${LEGACY_EVENT_TYPES.join(', ')}` }),
  agent_id: Nullable(BodyInt({ minimum: 1, description: "the agent's legacy integer id (see the agent versions routes); null = every agent" })),
  description: Nullable(t.String({ maxLength: MAX_DESCRIPTION_CHARS })),
  max_retries: BodyInt({ minimum: 0, maximum: MAX_MAX_RETRIES, description: `retries after the first attempt, 0–${MAX_MAX_RETRIES} (default ${DEFAULT_MAX_RETRIES})` }),
  timeout_ms: BodyInt({ minimum: MIN_TIMEOUT_MS, maximum: MAX_TIMEOUT_MS, description: `per attempt, ${MIN_TIMEOUT_MS}–${MAX_TIMEOUT_MS} (default ${DEFAULT_TIMEOUT_MS})` }),
}

export const CreateEndpoint = t.Object(
  {
    url: fields.url,
    event_types: fields.event_types,
    agent_id: t.Optional(fields.agent_id),
    description: t.Optional(fields.description),
    max_retries: t.Optional(fields.max_retries),
    timeout_ms: t.Optional(fields.timeout_ms),
  },
  { additionalProperties: false },
)
export type CreateEndpoint = Static<typeof CreateEndpoint>

export const PatchEndpoint = t.Object(
  {
    url: t.Optional(fields.url),
    event_types: t.Optional(fields.event_types),
    agent_id: t.Optional(fields.agent_id),
    description: t.Optional(fields.description),
    max_retries: t.Optional(fields.max_retries),
    timeout_ms: t.Optional(fields.timeout_ms),
    is_active: t.Optional(t.Boolean({ description: 'false stops new deliveries (and pending retries fail)' })),
  },
  { additionalProperties: false },
)
export type PatchEndpoint = Static<typeof PatchEndpoint>

export const Endpoint = t.Object({
  id: t.Integer({ description: 'numbered per account from 1; a deleted endpoint’s number is never given out again' }),
  url: t.String(),
  event_types: t.Array(t.String()),
  agent_id: Nullable(t.Integer()),
  description: Nullable(t.String()),
  is_active: t.Boolean(),
  max_retries: t.Integer(),
  timeout_ms: t.Integer(),
  created_at: t.String(),
})
export type Endpoint = Static<typeof Endpoint>

export const EndpointWithSecret = t.Object({ ...Endpoint.properties, secret: t.String({ description: 'returned only here; signs every delivery' }) })

export const Delivery = t.Object({
  id: t.String({ description: 'dlv_…' }),
  event_id: t.String({ description: 'our addition: the event (x-service-event-id)' }),
  event_type: t.String(),
  status: t.Union([t.Literal('pending'), t.Literal('success'), t.Literal('retrying'), t.Literal('failed')]),
  response_status: Nullable(t.Integer()),
  error_message: Nullable(t.String()),
  attempts: t.Integer(),
  next_attempt_at: Nullable(t.String({ description: 'our addition: when a retrying delivery tries again' })),
  created_at: t.String(),
  completed_at: Nullable(t.String()),
})
export type Delivery = Static<typeof Delivery>

export const EndpointParams = t.Object({ endpoint_id: t.Integer({ minimum: 1 }) })
export const DeliveryParams = t.Object({ endpoint_id: t.Integer({ minimum: 1 }), delivery_id: t.String() })
// docs/spec.md Limits: legacy deliveries page 1–200, default 50.
export const DeliveriesQuery = t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 50 })) })
