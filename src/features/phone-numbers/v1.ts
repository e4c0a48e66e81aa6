/** GET /phone-numbers (docs/spec.md Phone number); renting and attaching are console actions. */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { type PhoneNumberService, presentNumber } from './service'

export const PhoneNumber = t.Object({
  number: t.String(),
  label: t.Union([t.String(), t.Null()]),
  source: t.Union([t.Literal('rented'), t.Literal('brought')]),
  agent: t.Union([t.String(), t.Null()]),
  since: t.String(),
})

export function phoneNumbersV1(deps: { context: KernelHttp['v1']; numbers: PhoneNumberService }) {
  return new Elysia({ detail: { tags: ['Lists'] } }).use(deps.context).get('/phone-numbers', async ({ workspace }) => ({ items: (await deps.numbers.list(workspace.id)).map(presentNumber) }), {
    detail: { responses: answers({ 200: t.Object({ items: t.Array(PhoneNumber) }), ...v1Errors() }), summary: 'List the workspace’s phone numbers' },
  })
}
