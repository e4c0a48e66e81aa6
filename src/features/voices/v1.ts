/** GET /voices (docs/spec.md Voice). */
import { Elysia, t } from 'elysia'
import { VOICES } from '../../catalog/voices'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'

const Voice = t.Object({
  id: t.String(),
  name: t.String(),
  accent: t.String(),
  tier: t.Union([t.Literal('standard'), t.Literal('premium')]),
  description: t.Union([t.String(), t.Null()]),
})

export function voicesV1(deps: { context: KernelHttp['v1'] }) {
  return new Elysia({ detail: { tags: ['Lists'] } }).use(deps.context).get('/voices', () => ({ items: VOICES.map((v) => ({ ...v })) }), {
    detail: { responses: answers({ 200: t.Object({ items: t.Array(Voice) }), ...v1Errors() }), summary: 'List voices' },
  })
}
