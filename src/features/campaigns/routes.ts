/**
 * Console: create and start a campaign (docs/design.md), and pause, resume, cancel it as v1 does. v1: list, read, pause, resume, cancel
 * (docs/spec.md Campaigns; scopes per docs/spec.md Authentication: resume charges, so full only; pause and
 * cancel full or build; a read key reads).
 */
import { Elysia, t } from 'elysia'
import { NoBody } from '../../http/body-types'
import { answers, consoleErrors, v1Errors } from '../../http/docs'
import { pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { Campaign, CreateCampaign, ListQuery } from './model'
import type { CampaignService } from './service'

const Id = t.Object({ id: t.String() })

export function campaignsConsole(deps: { auth: KernelHttp['console']; campaigns: CampaignService }) {
  const { campaigns } = deps
  const moved =
    (move: 'pause' | 'resume' | 'cancel') =>
    async ({ params, workspace }: { params: { id: string }; workspace: { id: string } }) =>
      campaigns.present(await campaigns.move(workspace.id, params.id, move))
  return (
    new Elysia({ prefix: '/workspaces/:ws/campaigns', detail: { tags: ['Console'] } })
      .use(deps.auth)
      .post(
        '',
        async ({ body, set, workspace }) => {
          set.status = 201
          return campaigns.present(await campaigns.create(workspace, body))
        },
        {
          params: t.Object({ ws: t.String() }),
          workspace: true,
          body: CreateCampaign,
          detail: {
            summary: 'Create a campaign (draft); with scheduledAt it starts itself then',
            description:
              'chatapp: `template` (approved, on the agent’s chat-app number) and no `purpose`; voice: `purpose` and no `template`. 409: the agent has no number for the kind, or a calling campaign in a workspace with fewer than 2 call lines. `scheduledAt`: the campaign starts itself at that instant; if its agent has nothing published then, it goes `failed` with `lastError` saying so. A cancel before then means it never starts.',
            responses: answers({ 201: Campaign, ...consoleErrors(400, 404, 409) }),
          },
        },
      )
      .post('/:id/start', async ({ params, workspace }) => campaigns.present(await campaigns.move(workspace.id, params.id, 'start')), {
        params: t.Object({ ws: t.String(), id: t.String() }),
        body: NoBody,
        workspace: true,
        detail: {
          summary: 'Start a draft campaign (sending)',
          description:
            '409 naming the state when it is not a draft; 409 when its agent has nothing published. A scheduled campaign started by hand starts now and will not start again at its `scheduledAt`.',
          responses: answers({ 200: Campaign, ...consoleErrors(400, 404, 409) }),
        },
      })
      // The v1 moves under the console token, for the console app's buttons.
      .post('/:id/pause', moved('pause'), consoleMove('Pause a sending campaign (as POST /v1/campaigns/{id}/pause)'))
      .post('/:id/resume', moved('resume'), consoleMove('Resume a paused campaign (as POST /v1/campaigns/{id}/resume); 409 when its agent has nothing published'))
      .post('/:id/cancel', moved('cancel'), consoleMove('Cancel a campaign for good, from draft, sending or paused (as POST /v1/campaigns/{id}/cancel)'))
  )
}

const consoleMove = (summary: string) => ({
  params: t.Object({ ws: t.String(), id: t.String() }),
  body: NoBody,
  workspace: true as const,
  detail: {
    summary,
    description: '409 naming the current state when the move does not apply (docs/spec.md, Campaign status).',
    responses: answers({ 200: Campaign, ...consoleErrors(400, 404, 409) }),
  },
})

export function campaignsV1(deps: { context: KernelHttp['v1']; campaigns: CampaignService }) {
  const { campaigns } = deps
  const moved =
    (move: 'pause' | 'resume' | 'cancel') =>
    async ({ params, workspace }: { params: { id: string }; workspace: { id: string } }) =>
      campaigns.present(await campaigns.move(workspace.id, params.id, move))
  const conflictNote = '409 naming the current state when the move does not apply (docs/spec.md, Campaign status).'
  return new Elysia({ prefix: '/campaigns', detail: { tags: ['Campaigns'] } })
    .use(deps.context)
    .get(
      '',
      ({ query, workspace }) =>
        paginate(
          (limit, after) => campaigns.page(workspace.id, query.status, limit, after),
          query,
          25,
          (c) => campaigns.present(c),
        ),
      {
        query: ListQuery,
        detail: { summary: 'List campaigns, newest first', responses: answers({ 200: pageSchema(Campaign), ...v1Errors(400) }) },
      },
    )
    .get('/:id', async ({ params, workspace }) => campaigns.present(await campaigns.get(workspace.id, params.id)), {
      params: Id,
      detail: { summary: 'One campaign and its results', responses: answers({ 200: Campaign, ...v1Errors(404) }) },
    })
    .post('/:id/pause', moved('pause'), {
      params: Id,
      body: NoBody,
      scope: 'build',
      detail: {
        summary: 'Pause a sending campaign',
        description: `Messages and calls already handed over complete; nobody else is sent to until resumed. ${conflictNote}`,
        responses: answers({ 200: Campaign, ...v1Errors(403, 404, 409) }),
      },
    })
    .post('/:id/resume', moved('resume'), {
      params: Id,
      body: NoBody,
      scope: 'full',
      // It sends (docs/spec.md Conventions rule 6): a retried resume with the same key replays the first answer.
      idempotent: true,
      headers: t.Object({ 'idempotency-key': t.Optional(t.String({ description: 'repeat safely for 24 hours' })) }),
      detail: {
        summary: 'Resume a paused campaign (it charges: full key)',
        description: `Sends to everyone not yet reached; 409 when its agent has nothing published. A repeat with the same Idempotency-Key answers the first answer again (Idempotent-Replayed: true). ${conflictNote}`,
        responses: answers({ 200: Campaign, ...v1Errors(403, 404, 409) }),
      },
    })
    .post('/:id/cancel', moved('cancel'), {
      params: Id,
      body: NoBody,
      scope: 'build',
      detail: { summary: 'Cancel a campaign (permanent)', description: `From draft, sending or paused. ${conflictNote}`, responses: answers({ 200: Campaign, ...v1Errors(403, 404, 409) }) },
    })
}
