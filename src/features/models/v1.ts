/** GET /models: every model, with `available` for the caller's plan (SPEC.md Model). */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import { planIncludes } from '../plans'
import { MODELS } from './catalogue'
import type { KernelHttp } from '../feature'

const Model = t.Object({ id: t.String(), name: t.String(), voice: t.Boolean(), minPlan: t.String(), available: t.Boolean() })

export function modelsV1(deps: { context: KernelHttp['v1'] }) {
  return new Elysia({ detail: { tags: ['Lists'] } })
    .use(deps.context)
    .get(
      '/models',
      ({ principal }) => ({
        items: MODELS.map((m) => ({ id: m.id, name: m.name, voice: m.voice, minPlan: m.minPlan, available: planIncludes(principal.developer.plan, m.minPlan) })),
      }),
      { detail: { responses: answers({ 200: t.Object({ items: t.Array(Model) }, { additionalProperties: true }), ...v1Errors() }), summary: 'List models (unavailable ones show what an upgrade adds)' } },
    )
}
