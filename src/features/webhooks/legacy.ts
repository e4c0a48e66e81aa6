/**
 * Webhook endpoints, legacy surface (docs/spec.md "Webhooks (legacy)"): create and deliveries as shown,
 * plus list, read, update and delete (docs/spec.md: "not shown"; ours) and retry of a failed delivery.
 * Endpoint ids are integers per account (endpoint-numbers.ts); delivery ids are `dlv_…` strings.
 */
import { Elysia, t } from 'elysia'
import { NoBody } from '../../http/body-types'
import { answers, legacyErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { webhookCallbacks } from './callbacks'
import { CreateEndpoint, DeliveriesQuery, Delivery, DeliveryParams, Endpoint, EndpointParams, EndpointWithSecret, PatchEndpoint } from './legacy-model'
import type { LegacyWebhookService } from './legacy-service'

const Success = t.Literal('success')
/** Every legacy route can answer 401, 422 (legacyErrors adds them) and 429 (rate limit). */
const reads = (...codes: number[]) => legacyErrors(404, 429, ...codes)
const writes = (...codes: number[]) => legacyErrors(403, 404, 429, ...codes)

export function webhooksLegacy(deps: { context: KernelHttp['legacy']; webhooks: LegacyWebhookService }) {
  const { webhooks } = deps
  return new Elysia({ prefix: '/webhooks/endpoints', detail: { tags: ['Webhooks'] } })
    .use(deps.context)
    .post(
      '',
      async ({ body, workspace }) => {
        const { doc, secret } = await webhooks.create(workspace.id, body)
        return { status: 'success' as const, endpoint: { ...webhooks.present(doc), secret } }
      },
      {
        body: CreateEndpoint,
        detail: {
          responses: answers({ 200: t.Object({ status: Success, endpoint: EndpointWithSecret }), ...writes(400) }),
          summary: 'Create a webhook endpoint',
          description:
            '400 when the URL is not https (or is inside our network, or carries a user name or password), an event type is not one we send, or the account already has 20 endpoints; 404 for an unknown `agent_id`. ' +
            'The secret is in this answer only. Each delivery is a POST signed with `x-service-signature: sha256=<hex HMAC-SHA256 of the raw body>`; a non-2xx answer (a redirect too: it is not followed, and `error_message` names where it pointed) or none within `timeout_ms` is retried up to `max_retries` times after 30 s, 2 min, 8 min, 32 min, 1 h.',
          callbacks: webhookCallbacks('legacy'),
        } as Record<string, unknown>,
      },
    )
    .get('', async ({ workspace }) => ({ endpoints: (await webhooks.list(workspace.id)).map((d) => webhooks.present(d)) }), {
      detail: { responses: answers({ 200: t.Object({ endpoints: t.Array(Endpoint) }), ...legacyErrors(429) }), summary: 'List webhook endpoints (newest first; never the secret)' },
    })
    .get('/:endpoint_id', async ({ params, workspace }) => ({ endpoint: webhooks.present(await webhooks.get(workspace.id, params.endpoint_id)) }), {
      params: EndpointParams,
      detail: { responses: answers({ 200: t.Object({ endpoint: Endpoint }), ...reads() }), summary: 'Read a webhook endpoint' },
    })
    .patch('/:endpoint_id', async ({ params, body, workspace }) => ({ status: 'success' as const, endpoint: webhooks.present(await webhooks.patch(workspace.id, params.endpoint_id, body)) }), {
      params: EndpointParams,
      body: PatchEndpoint,
      detail: {
        responses: answers({ 200: t.Object({ status: Success, endpoint: Endpoint }), ...writes(400) }),
        summary: 'Change a webhook endpoint',
        description: 'Any of the create fields, and `is_active`. A new `max_retries` applies to deliveries queued afterwards.',
      },
    })
    .delete(
      '/:endpoint_id',
      async ({ params, workspace }) => {
        await webhooks.remove(workspace.id, params.endpoint_id)
        return { status: 'success' as const, endpoint_id: params.endpoint_id }
      },
      {
        params: EndpointParams,
        detail: { responses: answers({ 200: t.Object({ status: Success, endpoint_id: t.Integer() }), ...writes() }), summary: 'Delete a webhook endpoint and its delivery records' },
      },
    )
    .get('/:endpoint_id/deliveries', async ({ params, query, workspace }) => ({ deliveries: await webhooks.deliveries(workspace.id, params.endpoint_id, query.limit ?? 50) }), {
      params: EndpointParams,
      query: DeliveriesQuery,
      detail: { responses: answers({ 200: t.Object({ deliveries: t.Array(Delivery) }), ...reads() }), summary: 'Delivery records of an endpoint, newest first' },
    })
    .post(
      '/:endpoint_id/deliveries/:delivery_id/retry',
      async ({ params, workspace }) => {
        await webhooks.retry(workspace.id, params.endpoint_id, params.delivery_id)
        return { status: 'success' as const, delivery_id: params.delivery_id }
      },
      {
        params: DeliveryParams,
        body: NoBody,
        detail: {
          responses: answers({ 200: t.Object({ status: Success, delivery_id: t.String() }), ...writes(409) }),
          summary: 'Retry a failed delivery',
          description: 'Only a `failed` delivery: it goes back to `pending` with `attempts` reset to 0 and is attempted at once. Any other status answers 409 naming it.',
        },
      },
    )
}
