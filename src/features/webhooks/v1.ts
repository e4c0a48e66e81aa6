/** Webhooks (v1): register, list, read with delivery state, change, delete (docs/spec.md "Webhooks (v1)"). */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import { pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { webhookCallbacks } from './callbacks'
import { CreatedWebhook, CreateWebhook, ListWebhooksQuery, PatchWebhook, Webhook } from './model'
import type { WebhookService } from './service'

const DELIVERY_RULES =
  'Each event is attempted once, no retry: a POST of `{ event, sentAt, data }` signed with `x-service-signature: sha256=<hex HMAC-SHA256 of the raw body>` under the signing secret, with `x-service-event-id` to de-duplicate. ' +
  'Any 2xx within 10 s is a success; redirects are not followed (a 3xx is a failure, `delivery.lastError` names where it pointed). Five failures in a row switch the endpoint off (`enabled: false`, `delivery.lastError` says why) and the developer is notified; PATCH `enabled: true` switches it back on. ' +
  'An email address receives one email per event (needs SMTP on the service). Addresses inside the service’s own network, and URLs with a user name or password, are refused. The callbacks below describe every event body and header.'

export function webhooksV1(deps: { context: KernelHttp['v1']; webhooks: WebhookService }) {
  const { webhooks } = deps
  const Id = t.Object({ id: t.String() })
  return new Elysia({ prefix: '/webhooks', detail: { tags: ['Webhooks'] } })
    .use(deps.context)
    .get(
      '',
      ({ query, workspace }) =>
        paginate(
          (limit, after) => webhooks.list(workspace.id, query.agent, limit, after),
          query,
          25,
          (d) => webhooks.present(d),
        ),
      { query: ListWebhooksQuery, detail: { responses: answers({ 200: pageSchema(Webhook), ...v1Errors(400) }), summary: 'List webhooks, newest first' } },
    )
    .post(
      '',
      async ({ body, workspace, set }) => {
        const { doc, signingSecret } = await webhooks.create(workspace.id, body)
        set.status = 201
        return { ...(await webhooks.present(doc)), signingSecret }
      },
      {
        body: CreateWebhook,
        detail: {
          responses: answers({ 201: CreatedWebhook, ...v1Errors(400, 403, 409) }),
          summary: 'Register a webhook for an agent’s events',
          description: `\`signingSecret\` is in this answer only. \`events\` omitted means every event, now and later (\`["*"]\`). 409 when the agent already has 20 webhooks. ${DELIVERY_RULES}`,
          callbacks: webhookCallbacks('v1'),
        } as Record<string, unknown>,
      },
    )
    .get('/:id', async ({ params, workspace }) => webhooks.present(await webhooks.get(workspace.id, params.id)), {
      params: Id,
      detail: { responses: answers({ 200: Webhook, ...v1Errors(404) }), summary: 'Read a webhook with its delivery state' },
    })
    .patch('/:id', async ({ params, body, workspace }) => webhooks.present(await webhooks.patch(workspace.id, params.id, body)), {
      params: Id,
      body: PatchWebhook,
      detail: {
        responses: answers({ 200: Webhook, ...v1Errors(400, 403, 404) }),
        summary: 'Change url, events or enabled',
        description: '`enabled: true` switches it back on and forgives past failures; `enabled: false` switches it off.',
      },
    })
    .delete(
      '/:id',
      async ({ params, workspace, set }) => {
        await webhooks.remove(workspace.id, params.id)
        set.status = 204
        return null
      },
      { params: Id, detail: { responses: answers({ 204: t.Null(), ...v1Errors(403, 404) }), summary: 'Delete a webhook; nothing more is sent to it' } },
    )
}
