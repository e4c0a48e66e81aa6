/**
 * Customers (v1): create, list, read, patch, delete/restore, and customer keys.
 * Delete and restore are moves of the customer-workspace actor (lifecycle.ts).
 */
import { Elysia, t } from 'elysia'
import type { Coordination } from '../../coordination/port'
import { badRequest, forbidden, ApiError } from '../../http/errors'
import { requireScope, type v1Context } from '../../http/context'
import { applyResult, idempotent } from '../../http/idempotency'
import { paginate, pageQuery, pageSchema } from '../../http/pagination'
import { answers, v1Errors } from '../../http/docs'
import type { KeyService, Principal } from '../keys/service'
import type { WorkspaceDoc } from '../workspaces/repository'
import type { CustomerLifecycle } from './lifecycle'
import { CreateCustomer, CreateKey, Customer, CustomerDetail, IssuedKey, KeyRecord, ListCustomersQuery, PatchCustomer } from './model'
import { presentCustomer, type CustomerService } from './service'

/** Customer management runs in the developer's own workspace, with a developer key (rule 4). */
function developerOnly(principal: Principal, workspace: WorkspaceDoc): WorkspaceDoc {
  if (principal.home.kind === 'customer') throw forbidden('a customer key cannot manage customers; use a key of the developer workspace')
  if (workspace.id !== principal.developer.id) {
    throw badRequest('Service-Workspace', 'customer management runs in your own workspace; send it without this header')
  }
  return principal.developer
}

// SPEC.md Limits gives no page size for keys: the same bounds as the other v1 lists (max 100, default 25).
const KEYS_PAGE_MAX = 100
const KEYS_PAGE_DEFAULT = 25

export function customersV1(deps: {
  context: ReturnType<typeof v1Context>
  customers: CustomerService
  keys: KeyService
  coordination: Coordination
  lifecycle: CustomerLifecycle
}) {
  const { customers, keys } = deps
  const Id = t.Object({ id: t.String() })
  return new Elysia({ prefix: '/customers', detail: { tags: ['Customers'] } })
    .use(deps.context)
    .post(
      '',
      async ({ body, principal, workspace, request, set }) => {
        const developer = developerOnly(principal, workspace)
        requireScope(principal, 'full', 'creating a customer')
        const result = await idempotent(deps.coordination, `${developer.id}:POST /customers`, request.headers.get('idempotency-key'), body, async () => ({
          status: 201,
          body: presentCustomer(await customers.create(developer, body)),
        }))
        return applyResult(set, result)
      },
      {
        body: CreateCustomer,
        headers: t.Object({
          'idempotency-key': t.Optional(t.String({ description: 'repeat the create safely for 24 hours: the repeat answers the first result with `Idempotent-Replayed: true`' })),
        }),
        detail: { responses: answers({ 201: Customer, ...v1Errors(400, 402, 403, 409) }), summary: 'Create a customer workspace', description: 'Needs a full key. Send `Idempotency-Key` so a retry never makes two customers.' },
      },
    )
    .get(
      '',
      async ({ query, principal, workspace }) => {
        const developer = developerOnly(principal, workspace)
        return paginate((limit, after) => customers.list(developer, query, limit, after), query, 25, presentCustomer)
      },
      { query: ListCustomersQuery, detail: { responses: answers({ 200: pageSchema(Customer), ...v1Errors(400, 403) }), summary: 'List customers, newest first' } },
    )
    .get('/:id', ({ params, principal, workspace }) => customers.detail(developerOnly(principal, workspace), params.id), {
      params: Id,
      detail: { responses: answers({ 200: CustomerDetail, ...v1Errors(400, 403, 404) }), summary: 'Read a customer with counts and this month’s spend' },
    })
    .patch(
      '/:id',
      async ({ params, body, principal, workspace }) => {
        const developer = developerOnly(principal, workspace)
        requireScope(principal, 'full', 'changing a customer')
        return presentCustomer(await customers.patch(developer, params.id, body))
      },
      { params: Id, body: PatchCustomer, detail: { responses: answers({ 200: Customer, ...v1Errors(400, 403, 404, 409) }), summary: 'Change a customer (metadata is merged)' } },
    )
    .delete(
      '/:id',
      async ({ params, principal, workspace }) => {
        const developer = developerOnly(principal, workspace)
        requireScope(principal, 'full', 'deleting a customer')
        return presentCustomer(await deps.lifecycle.remove(await customers.get(developer, params.id)))
      },
      {
        params: Id,
        detail: { responses: answers({ 200: Customer, ...v1Errors(403, 404, 409, 503) }),
          summary: 'Delete (archive) a customer; erased after 30 days',
          description:
            '200 with the customer (`archivedAt`, `eraseAfter` set). Requests into it then answer 410 and its keys 401. ' +
            '409 while it holds phone or messaging numbers (`numbers` names them) or when it is not active (`state`).',
        },
      },
    )
    .post(
      '/:id/restore',
      async ({ params, principal, workspace }) => {
        const developer = developerOnly(principal, workspace)
        requireScope(principal, 'full', 'restoring a customer')
        return presentCustomer(await deps.lifecycle.restore(await customers.get(developer, params.id)))
      },
      {
        params: Id,
        detail: { responses: answers({ 200: Customer, ...v1Errors(403, 404, 409, 503) }),
          summary: 'Bring back a deleted customer',
          description: '200 with the customer. Its old keys stay revoked and cancelled campaigns are not restarted. 409 naming the state when it is not deleted.',
        },
      },
    )
    .post(
      '/:id/keys',
      async ({ params, body, principal, workspace, set }) => {
        const developer = developerOnly(principal, workspace)
        requireScope(principal, 'full', 'creating a customer key')
        const customer = await customers.get(developer, params.id)
        if (customer.status !== 'active') throw new ApiError(409, `customer ${customer.id} is deleted; restore it first`, { state: customer.status })
        set.status = 201
        return keys.issue(customer, body.name, body.scope)
      },
      { params: Id, body: CreateKey, detail: { responses: answers({ 201: IssuedKey, ...v1Errors(400, 403, 404, 409) }), summary: 'Create a customer key (the value is shown once)' } },
    )
    .get(
      '/:id/keys',
      async ({ params, query, principal, workspace }) => {
        const customer = await customers.get(developerOnly(principal, workspace), params.id)
        return paginate((limit, after) => keys.list(customer.id, limit, after), query, KEYS_PAGE_DEFAULT, (k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          scope: k.scope,
          lastUsedAt: k.lastUsedAt,
          createdAt: k.createdAt,
        }))
      },
      {
        params: Id,
        query: t.Object(pageQuery(KEYS_PAGE_MAX, KEYS_PAGE_DEFAULT)),
        detail: { responses: answers({ 200: pageSchema(KeyRecord), ...v1Errors(400, 403, 404) }), summary: 'List a customer’s keys, newest first (never their values)' },
      },
    )
    .delete(
      '/:id/keys/:keyId',
      async ({ params, principal, workspace, set }) => {
        const developer = developerOnly(principal, workspace)
        requireScope(principal, 'full', 'revoking a customer key')
        await customers.get(developer, params.id)
        await keys.revoke(params.id, params.keyId)
        set.status = 204
        return null
      },
      { params: t.Object({ id: t.String(), keyId: t.String() }), detail: { responses: answers({ 204: t.Null(), ...v1Errors(403, 404) }), summary: 'Revoke a customer key at once' } },
    )
}
