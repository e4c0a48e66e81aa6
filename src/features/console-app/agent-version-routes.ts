/**
 * The agents page's versions and test chat: the versions with the panels each changed, the diff of
 * two (or of the draft against the published one), publish, unpublish, roll back, and test chat
 * against the draft. Each calls the service the legacy and v1 routes call (docs/api/agents.md
 * "Agent versions", POST /api/v1/agents/{id}/test-chat): the same rules, refusals and 409s. The
 * console has no API key, so a version it makes names `console` as its maker.
 */
import { Elysia, t } from 'elysia'
import { NoBody } from '../../http/body-types'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { ConversationFeature } from '../conversations/public'
import { TestChatAnswer, TestChatBody } from '../conversations/public'
import { changedPanels, PANELS, type VersionDoc, type VersionService } from '../versions/public'

/** `created_by` of what the console does: it holds no API key. */
export const CONSOLE_MAKER = 'console'

const Loose = t.Record(t.String(), t.Unknown())
const Vid = t.Integer({ minimum: 1, description: 'a version number of this agent' })
const AgentPath = t.Object({ ws: t.String(), id: t.String() })
const VersionPath = t.Object({ ws: t.String(), id: t.String(), vid: Vid })
const Changes = t.Record(t.String(), t.Object({ old: t.Unknown(), new: t.Unknown() }))

const VersionRow = t.Object({
  number: t.Integer(),
  label: t.String(),
  kind: t.String({ description: 'publish, checkpoint or backup (saved by a rollback)' }),
  environment: t.String(),
  isActive: t.Boolean({ description: 'the version served' }),
  createdBy: t.String({ description: 'the API key id that made it, or `console`' }),
  createdAt: t.String(),
  changeSummary: t.Union([t.String(), t.Null()]),
  changedFields: t.Union([t.Array(t.String()), t.Null()], { description: 'the panels it changed from the version before it; null for the first' }),
})

const row = (v: VersionDoc, before: VersionDoc | undefined) => ({
  number: v.number,
  label: v.label,
  kind: v.kind,
  environment: v.environment,
  isActive: v.isActive,
  createdBy: v.createdBy,
  createdAt: v.createdAt,
  changeSummary: v.changeSummary,
  changedFields: before ? changedPanels(before.snapshot, v.snapshot) : null,
})

export function consoleAgentVersionRoutes(d: { auth: KernelHttp['console']; versions: VersionService; testChat: ConversationFeature['testChat'] }) {
  const { versions } = d
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(d.auth)
    .get(
      '/workspaces/:ws/agents/:id/versions',
      async ({ params, workspace }) => {
        const status = await versions.status(workspace.id, params.id)
        const list = await versions.list(workspace.id, params.id)
        return {
          status: {
            status: status.status,
            publishedVersion: status.publishedVersionId,
            lastPublishedAt: status.lastPublishedAt,
            hasUnpublishedChanges: status.hasUnpublishedChanges,
            changedFields: status.changedFields,
          },
          versions: list.map((v, i) => row(v, list[i + 1])),
        }
      },
      {
        params: AgentPath,
        workspace: true,
        detail: {
          summary: `The agent's publication status and its versions, newest first, each with the panels (${PANELS.join(', ')}) it changed`,
          responses: answers({ 200: t.Object({ status: Loose, versions: t.Array(VersionRow) }), ...consoleErrors(404) }),
        },
      },
    )
    .get('/workspaces/:ws/agents/:id/versions/:vid/diff/:vid_b', async ({ params, workspace }) => ({ changes: (await versions.diff(workspace.id, params.id, params.vid, params.vid_b)).changes }), {
      params: t.Object({ ws: t.String(), id: t.String(), vid: Vid, vid_b: Vid }),
      workspace: true,
      detail: { summary: 'What changed from version vid (old) to vid_b (new), by field path', responses: answers({ 200: t.Object({ changes: Changes }), ...consoleErrors(400, 404) }) },
    })
    .get(
      '/workspaces/:ws/agents/:id/diff-draft',
      async ({ params, workspace }) => {
        const r = await versions.diffDraft(workspace.id, params.id)
        return { published: r.published.number, changes: r.changes }
      },
      {
        params: AgentPath,
        workspace: true,
        detail: { summary: 'What the draft changed since the published version; 409 naming `draft` when nothing is published', responses: answers({ 200: Loose, ...consoleErrors(404, 409) }) },
      },
    )
    .post('/workspaces/:ws/agents/:id/publish', async ({ params, body, workspace }) => row(await versions.publish(workspace.id, params.id, CONSOLE_MAKER, body?.changeSummary ?? null), undefined), {
      params: AgentPath,
      workspace: true,
      body: t.Optional(t.Object({ changeSummary: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])) }, { additionalProperties: false })),
      detail: {
        summary: 'Publish the draft (POST /agents/{id}/publish): 409 when a suite required to publish has not passed on this draft',
        responses: answers({ 200: VersionRow, ...consoleErrors(400, 404, 409, 503) }),
      },
    })
    .post(
      '/workspaces/:ws/agents/:id/unpublish',
      async ({ params, workspace }) => {
        await versions.unpublish(workspace.id, params.id, CONSOLE_MAKER)
        return { status: 'draft' }
      },
      {
        params: AgentPath,
        workspace: true,
        body: NoBody,
        detail: { summary: 'Stop serving the published version; 409 naming `draft` when nothing is published', responses: answers({ 200: Loose, ...consoleErrors(404, 409, 503) }) },
      },
    )
    .post(
      '/workspaces/:ws/agents/:id/versions/:vid/rollback',
      async ({ params, workspace }) => {
        const r = await versions.rollback(workspace.id, params.id, CONSOLE_MAKER, params.vid)
        return { target: r.target.number, backup: r.backup, published: r.published }
      },
      {
        params: VersionPath,
        workspace: true,
        body: NoBody,
        detail: {
          summary: 'Roll back to a version: the agent as it is is saved as a backup version, the chosen one restored and published',
          responses: answers({ 200: t.Object({ target: t.Integer(), backup: t.Integer(), published: t.Integer() }), ...consoleErrors(400, 404, 409, 503) }),
        },
      },
    )
    .post('/workspaces/:ws/agents/:id/test-chat', ({ params, body, workspace }) => d.testChat.send(workspace, params.id, body), {
      params: AgentPath,
      workspace: true,
      body: TestChatBody,
      detail: {
        summary: 'Test chat with the draft (POST /api/v1/agents/{id}/test-chat under the console token)',
        responses: answers({ 200: TestChatAnswer, ...consoleErrors(400, 402, 404, 409, 429, 502, 503) }),
      },
    })
}
