/** v1 webhook schemas (docs/spec.md "Webhook endpoint (v1)", "Webhooks (v1)") and their static types. */
import { type Static, t } from 'elysia'
import { ALL_EVENTS, V1_EVENT_TYPES } from '../../events/catalogue'
import { pageQuery } from '../../http/pagination'
import { MAX_URL_CHARS } from './targets'

export const WebhookEventName = t.Union([...V1_EVENT_TYPES.map((e) => t.Literal(e)), t.Literal(ALL_EVENTS)], {
  description: 'a v1 event type, or `*` for every event now and later',
})

const Events = t.Array(WebhookEventName, {
  minItems: 1,
  maxItems: V1_EVENT_TYPES.length + 1,
  description: 'what to send; omitted on create means `["*"]`, every event now and in future',
})

const Url = t.String({ minLength: 1, maxLength: MAX_URL_CHARS, description: 'an https URL, or an email address (one email per event)' })

export const Webhook = t.Object({
  id: t.String({ description: 'wh_…' }),
  agent: t.String({ description: 'the agent whose events it receives' }),
  url: t.String(),
  events: t.Array(t.String()),
  enabled: t.Boolean({ description: 'false after five failed deliveries in a row, on request, or when the customer was deleted' }),
  delivery: t.Object({
    failuresInARow: t.Integer(),
    lastStatus: t.Union([t.Integer(), t.Null()], { description: 'HTTP status of the last attempt (SMTP reply code for email); null when none came' }),
    lastError: t.Union([t.String(), t.Null()]),
    lastSentAt: t.Union([t.String(), t.Null()]),
  }),
  createdAt: t.String(),
})
export type Webhook = Static<typeof Webhook>

export const CreatedWebhook = t.Object({
  ...Webhook.properties,
  signingSecret: t.String({ description: 'shown only here: the HMAC-SHA256 key of x-service-signature' }),
})

export const CreateWebhook = t.Object({ agent: t.String({ minLength: 1, description: 'ag_…' }), url: Url, events: t.Optional(Events) }, { additionalProperties: false })
export type CreateWebhook = Static<typeof CreateWebhook>

export const PatchWebhook = t.Object(
  {
    url: t.Optional(Url),
    events: t.Optional(Events),
    enabled: t.Optional(t.Boolean({ description: 'true switches it back on and forgives past failures; false switches it off' })),
  },
  { additionalProperties: false },
)
export type PatchWebhook = Static<typeof PatchWebhook>

export const ListWebhooksQuery = t.Object({ ...pageQuery(100, 25), agent: t.Optional(t.String({ description: 'only this agent’s webhooks (ag_…)' })) })
