/** GET /agents/{id}/analytics (docs/spec.md Agents; a read key is enough). */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { AgentService } from '../agents/public'
import { Analytics, AnalyticsQuery } from './model'
import type { AnalyticsService } from './service'

export function analyticsV1(deps: { context: KernelHttp['v1']; agents: AgentService; analytics: AnalyticsService }) {
  return new Elysia({ prefix: '/agents', detail: { tags: ['Agents'] } }).use(deps.context).get(
    '/:id/analytics',
    async ({ params, query, workspace }) => {
      const agent = await deps.agents.get(workspace.id, params.id)
      return deps.analytics.forAgent(workspace.id, agent.id, query.days ?? 30, query.rows ?? 20)
    },
    {
      params: t.Object({ id: t.String() }),
      query: AnalyticsQuery,
      detail: {
        responses: answers({ 200: Analytics, ...v1Errors(400, 404) }),
        summary: 'Agent analytics: totals, daily and hourly series, channels, knowledge gaps, top questions',
        description: 'Days and hours are UTC; the window is the last `days` calendar days, today included. `resolved`, `escalated` and `human_handled` count conversations by current status.',
      },
    },
  )
}
