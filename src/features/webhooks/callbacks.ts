/**
 * OpenAPI `callbacks` of the routes that register webhooks (v1 `POST /webhooks`, legacy
 * `POST /webhooks/endpoints`): one entry per event the surface sends, with its body (the envelopes
 * of src/events/payloads.ts) and every header a delivery carries (signing.ts). The e2e tests
 * compare these headers with what a real receiver gets, so a header added to deliveries and not
 * here fails them.
 *
 * `content-type: application/json` is the request body's media type: OpenAPI ignores a header
 * parameter of that name, so it is stated by `requestBody` only.
 */
import { EVENT_DESCRIPTIONS, LEGACY_EVENT_TYPES, V1_EVENT_TYPES } from '../../events/catalogue'
import { legacyEnvelope, v1Envelope } from '../../events/payloads'
import { DELIVERY_ATTEMPT_HEADER, DELIVERY_ID_HEADER, EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, USER_AGENT, WEBHOOK_ID_HEADER } from './signing'

export type WebhookSurface = 'v1' | 'legacy'

const header = (name: string, description: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } })

const COMMON_HEADERS = [
  header(SIGNATURE_HEADER, '`sha256=<hex>`: HMAC-SHA256 of the raw body bytes under the signing secret'),
  header(EVENT_ID_HEADER, 'the event id (`evt_…`), the same on every attempt and every endpoint: de-duplicate on it'),
  header(EVENT_TYPE_HEADER, 'the event type, as in the body'),
  header('user-agent', `\`${USER_AGENT}\``),
]

const SURFACE_HEADERS: Record<WebhookSurface, ReturnType<typeof header>[]> = {
  v1: [header(WEBHOOK_ID_HEADER, 'the webhook (`wh_…`) this delivery is for')],
  legacy: [
    header(DELIVERY_ID_HEADER, 'the delivery record (`dlv_…`), as listed by GET /webhooks/endpoints/{endpoint_id}/deliveries'),
    header(DELIVERY_ATTEMPT_HEADER, 'the attempt number: 1 for the first, 2 for the first retry, …'),
  ],
}

/** Every header a delivery of this surface carries, as OpenAPI parameters. */
export const deliveryHeaders = (surface: WebhookSurface) => [...COMMON_HEADERS, ...SURFACE_HEADERS[surface]]

export function webhookCallbacks(surface: WebhookSurface): Record<string, unknown> {
  const types = surface === 'v1' ? V1_EVENT_TYPES : LEGACY_EVENT_TYPES
  const envelope = surface === 'v1' ? v1Envelope : legacyEnvelope
  return Object.fromEntries(
    types.map((type) => [
      type,
      {
        '{$request.body#/url}': {
          post: {
            summary: `${type}: ${EVENT_DESCRIPTIONS[type]}`,
            parameters: deliveryHeaders(surface),
            requestBody: { required: true, content: { 'application/json': { schema: envelope(type) } } },
            responses: { '2XX': { description: 'received; any other answer (a redirect too, which is not followed), or none in time, is a failed delivery' } },
          },
        },
      },
    ]),
  )
}
