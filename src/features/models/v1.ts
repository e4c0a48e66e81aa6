/** GET /models: every model, with `available` for the caller's plan (docs/spec.md Model), and `byok` on a workspace using its own keys. */
import { Elysia, t } from 'elysia'
import { MODELS } from '../../catalog/models'
import { planIncludes } from '../../catalog/plans'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { ByokService } from '../byok/public'

const Model = t.Object({ id: t.String(), name: t.String(), voice: t.Boolean(), minPlan: t.String(), available: t.Boolean() })

const Byok = t.Object(
  {
    using: t.Union([t.Literal('own'), t.Literal('developer')]),
    provider: t.String({ description: "the llm key's provider" }),
    models: t.Array(t.String(), { description: 'what that key reaches: the values a BYOK agent model choice takes' }),
    model: t.String({ description: 'the one running unless an agent chose another' }),
  },
  { description: 'only on a workspace running on its own keys (BYOK)' },
)

export function modelsV1(deps: { context: KernelHttp['v1']; byok: Pick<ByokService, 'effective'> }) {
  return new Elysia({ detail: { tags: ['Lists'] } }).use(deps.context).get(
    '/models',
    async ({ principal, workspace }) => {
      const items = MODELS.map((m) => ({ id: m.id, name: m.name, voice: m.voice, minPlan: m.minPlan, available: planIncludes(principal.developer.plan, m.minPlan) }))
      const own = await deps.byok.effective(workspace)
      if (!own) return { items }
      const llm = own.keys.llm
      return { items, byok: { using: own.using, provider: llm.provider, models: llm.models, model: llm.model } }
    },
    { detail: { responses: answers({ 200: t.Object({ items: t.Array(Model), byok: t.Optional(Byok) }), ...v1Errors() }), summary: 'List models (unavailable ones show what an upgrade adds)' } },
  )
}
