/**
 * The console app's campaign reads: campaigns with their counts, one campaign, its recipients with
 * each one's outcome and why a send failed or was skipped (the recipient row's `error`: the
 * wallet was empty, the platform refused, the number opted out…), a calling campaign's recipients
 * with their call (status, length, hang-up).
 */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import { pageQuery, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { invalid } from '../../refusals'
import type { CallReads } from '../calls/public'
import type { CampaignsServices } from '../campaigns/public'

const Loose = t.Record(t.String(), t.Unknown())
const PageOfLoose = t.Object({ items: t.Array(Loose), nextCursor: t.Union([t.String(), t.Null()]) })
const RECIPIENT_STATUSES = ['pending', 'sending', 'sent', 'delivered', 'read', 'replied', 'failed', 'skipped'] as const

export interface CampaignReadsDeps {
  auth: KernelHttp['console']
  campaigns: CampaignsServices['campaigns']
  calls: Pick<CallReads, 'newest'>
}

export function consoleCampaignReads(d: CampaignReadsDeps) {
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(d.auth)
    .get(
      '/workspaces/:ws/campaigns',
      ({ query, workspace }) =>
        paginate(
          (limit, after) => d.campaigns.page(workspace.id, undefined, limit, after),
          query,
          25,
          (c) => d.campaigns.present(c),
        ),
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        query: t.Object(pageQuery(100, 25)),
        detail: { summary: 'Campaigns with their counts, newest first', responses: answers({ 200: PageOfLoose, ...consoleErrors(400, 404) }) },
      },
    )
    .get('/workspaces/:ws/campaigns/:id', async ({ params, workspace }) => d.campaigns.present(await d.campaigns.get(workspace.id, params.id)), {
      params: t.Object({ ws: t.String(), id: t.String() }),
      workspace: true,
      detail: { summary: 'One campaign with its counts and lastError', responses: answers({ 200: Loose, ...consoleErrors(404) }) },
    })
    .get(
      '/workspaces/:ws/campaigns/:id/recipients',
      async ({ params, query, workspace }) => {
        const limit = query.limit ?? 50
        const after = query.cursor === undefined ? null : Number(query.cursor)
        if (after !== null && !Number.isSafeInteger(after)) throw invalid('cursor', 'is not a nextCursor of this list')
        const rows = await d.campaigns.recipientsPage(workspace.id, params.id, { status: query.status }, limit, after)
        const items = await Promise.all(
          rows.map(async (r) => {
            const call = r.callId ? await d.calls.newest(r.callId) : null
            return {
              index: r.index,
              phone: r.phone,
              status: r.status,
              error: r.error ?? null,
              errorCode: r.errorCode ?? null,
              sentAt: r.sentAt ?? null,
              callId: r.callId ?? null,
              call: call ? { status: call.status, attempt: call.attempt, seconds: call.seconds, hangup: call.hangup, endedAt: call.endedAt } : null,
            }
          }),
        )
        return { items, nextCursor: rows.length === limit ? String(rows.at(-1)!.index) : null }
      },
      {
        params: t.Object({ ws: t.String(), id: t.String() }),
        workspace: true,
        query: t.Object({
          ...pageQuery(200, 50),
          status: t.Optional(t.Union(RECIPIENT_STATUSES.map((s) => t.Literal(s)))),
        }),
        detail: {
          summary: "A campaign's recipients in the order given: each one's status, why it failed or was skipped (error, errorCode), and a calling campaign's call",
          responses: answers({ 200: PageOfLoose, ...consoleErrors(400, 404) }),
        },
      },
    )
}
