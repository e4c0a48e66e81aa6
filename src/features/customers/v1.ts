/**
 * Customers (v1): create, list, read, patch, delete/restore, and customer keys.
 * Delete and restore are moves of the customer-workspace actor (lifecycle.ts).
 */
import { Elysia, t } from 'elysia'
import type { Coordination } from '../../coordination/port'
import { NoBody } from '../../http/body-types'
import { answers, v1Errors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import type { KeyService } from '../workspaces/public'
import type { CustomerLifecycle } from './lifecycle'
import { CreateCustomer, CreateKey, Customer, CustomerDetail, IssuedKey, KeyRecord, ListCustomersQuery, PatchCustomer } from './model'
import { type CustomerService, presentCustomer } from './service'

// docs/spec.md Limits gives no page size for keys: the same bounds as the other v1 lists (max 100, default 25).
const KEYS_PAGE_MAX = 100
const KEYS_PAGE_DEFAULT = 25

export function customersV1(deps: { context: KernelHttp['v1']; customers: CustomerService; keys: KeyService; coordination: Coordination; lifecycle: CustomerLifecycle }) {
  const { customers, keys } = deps
  const Id = t.Object({ id: t.String() })
  return new Elysia({ prefix: '/customers', detail: { tags: ['Customers'] } })
    .use(deps.context)
    .post(
      '',
      async ({ body, developer, set }) => {
        const customer = presentCustomer(await customers.create(developer, body))
        set.status = 201
        return customer
      },
      {
        developerOnly: true,
        scope: 'full' as const,
        idempotent: true,
        body: CreateCustomer,
        headers: t.Object({
          'idempotency-key': t.Optional(t.String({ description: 'repeat the create safely for 24 hours: the repeat answers the first result with `Idempotent-Replayed: true`' })),
        }),
        detail: {
          responses: answers({ 201: Customer, ...v1Errors(400, 402, 403, 409) }),
          summary: 'Create a customer workspace',
          description: 'Needs a full key. Send `Idempotency-Key` so a retry never makes two customers.',
        },
      },
    )
    .get(
      '',
      async ({ query, developer }) => {
        return paginate((limit, after) => customers.list(developer, query, limit, after), query, 25, presentCustomer)
      },
      { developerOnly: true, query: ListCustomersQuery, detail: { responses: answers({ 200: pageSchema(Customer), ...v1Errors(400, 403) }), summary: 'List customers, newest first' } },
    )
    .get('/:id', ({ params, developer }) => customers.detail(developer, params.id), {
      developerOnly: true,
      params: Id,
      detail: { responses: answers({ 200: CustomerDetail, ...v1Errors(400, 403, 404) }), summary: 'Read a customer with counts and this month’s spend' },
    })
    .patch(
      '/:id',
      async ({ params, body, developer }) => {
        return presentCustomer(await customers.patch(developer, params.id, body))
      },
      {
        developerOnly: true,
        scope: 'full' as const,
        params: Id,
        body: PatchCustomer,
        detail: { responses: answers({ 200: Customer, ...v1Errors(400, 403, 404, 409) }), summary: 'Change a customer (metadata is merged)' },
      },
    )
    .delete(
      '/:id',
      async ({ params, developer }) => {
        return presentCustomer(await deps.lifecycle.remove(await customers.get(developer, params.id)))
      },
      {
        developerOnly: true,
        scope: 'full' as const,
        params: Id,
        detail: {
          responses: answers({ 200: Customer, ...v1Errors(403, 404, 409, 503) }),
          summary: 'Delete (archive) a customer; erased after 30 days',
          description:
            '200 with the customer (`archivedAt`, `eraseAfter` set). Requests into it then answer 410 and its keys 401. ' +
            '409 while it holds phone or messaging numbers (`numbers` names them) or when it is not active (`state`).',
        },
      },
    )
    .post(
      '/:id/restore',
      async ({ params, developer }) => {
        return presentCustomer(await deps.lifecycle.restore(await customers.get(developer, params.id)))
      },
      {
        developerOnly: true,
        scope: 'full' as const,
        params: Id,
        body: NoBody,
        detail: {
          responses: answers({ 200: Customer, ...v1Errors(403, 404, 409, 503) }),
          summary: 'Bring back a deleted customer',
          description: '200 with the customer. Its old keys stay revoked and cancelled campaigns are not restarted. 409 naming the state when it is not deleted.',
        },
      },
    )
    .post(
      '/:id/keys',
      async ({ params, body, developer, set }) => {
        set.status = 201
        return keys.issue(await customers.activeForKeys(developer, params.id), body.name, body.scope)
      },
      {
        developerOnly: true,
        scope: 'full' as const,
        params: Id,
        body: CreateKey,
        detail: { responses: answers({ 201: IssuedKey, ...v1Errors(400, 403, 404, 409) }), summary: 'Create a customer key (the value is shown once)' },
      },
    )
    .get(
      '/:id/keys',
      async ({ params, query, developer }) => {
        const customer = await customers.get(developer, params.id)
        return paginate(
          (limit, after) => keys.list(customer.id, limit, after),
          query,
          KEYS_PAGE_DEFAULT,
          (k) => ({
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            scope: k.scope,
            lastUsedAt: k.lastUsedAt,
            createdAt: k.createdAt,
          }),
        )
      },
      {
        developerOnly: true,
        params: Id,
        query: t.Object(pageQuery(KEYS_PAGE_MAX, KEYS_PAGE_DEFAULT)),
        detail: { responses: answers({ 200: pageSchema(KeyRecord), ...v1Errors(400, 403, 404) }), summary: 'List a customer’s keys, newest first (never their values)' },
      },
    )
    .delete(
      '/:id/keys/:keyId',
      async ({ params, developer, set }) => {
        await customers.get(developer, params.id)
        await keys.revoke(params.id, params.keyId)
        set.status = 204
        return null
      },
      {
        developerOnly: true,
        scope: 'full' as const,
        params: t.Object({ id: t.String(), keyId: t.String() }),
        detail: { responses: answers({ 204: t.Null(), ...v1Errors(403, 404) }), summary: 'Revoke a customer key at once' },
      },
    )
}
