/** GET /usage (docs/spec.md Usage and analytics; a read key is enough). */
import { Elysia } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { UsageAnswer, UsageQuery } from './model'
import type { UsageReports } from './report'

export function usageV1(deps: { context: KernelHttp['v1']; reports: UsageReports }) {
  return new Elysia({ detail: { tags: ['Usage'] } }).use(deps.context).get('/usage', ({ query, workspace }) => deps.reports.of(workspace, query.days ?? 30), {
    query: UsageQuery,
    detail: {
      responses: answers({ 200: UsageAnswer, ...v1Errors(400) }),
      summary: 'Usage this month: replies against the allowance, the wallet, replies per UTC day',
      description:
        '`period` is the current UTC month (`end` exclusive). `replies.used` counts the whole account (developer and customers share the allowance); `daily` counts the workspace asked about (a developer’s includes its customers). `wallet` is null on Free; inside a customer the answer says `billedTo: developer` and has no wallet.',
    },
  })
}
