/** Console: developer workspaces and their keys (docs/design.md "The console surface, exactly"). */
import { Elysia, t } from 'elysia'
import { PLAN_IDS } from '../../catalog/plans'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { KeyService } from './keys'
import { presentWorkspace, type WorkspaceService } from './service'

const Plan = t.Union(PLAN_IDS.map((p) => t.Literal(p)))
const Currency = t.Union([t.Literal('INR'), t.Literal('USD')])
const Workspace = t.Object({ id: t.String(), name: t.String(), plan: t.String(), currency: t.String(), timezone: t.String(), whiteLabel: t.Boolean() })
const Fields = {
  plan: t.Optional(Plan),
  currency: t.Optional(Currency),
  timezone: t.Optional(t.String({ maxLength: 64, description: 'IANA time zone name' })),
  whiteLabel: t.Optional(t.Boolean()),
}

export function workspacesConsole(deps: { auth: KernelHttp['console']; workspaces: WorkspaceService; keys: KeyService }) {
  const { workspaces, keys } = deps
  const Ws = t.Object({ ws: t.String() })
  return new Elysia({ prefix: '/workspaces', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post(
      '',
      async ({ body, set }) => {
        const ws = await workspaces.createDeveloper(body)
        const key = await keys.issue(ws, 'first key', 'full')
        set.status = 201
        return { ...presentWorkspace(ws), key: key.key }
      },
      {
        body: t.Object({ name: t.String({ minLength: 1, maxLength: 120 }), ...Fields }, { additionalProperties: false }),
        detail: { responses: answers({ 201: t.Composite([Workspace, t.Object({ key: t.String() })]), ...consoleErrors(400) }), summary: 'Create a developer workspace with a first full key' },
      },
    )
    .patch('/:ws', async ({ params, body }) => presentWorkspace(await workspaces.patch(params.ws, body)), {
      params: Ws,
      body: t.Object({ name: t.Optional(t.String({ minLength: 1, maxLength: 120 })), ...Fields }, { additionalProperties: false }),
      detail: { responses: answers({ 200: Workspace, ...consoleErrors(400, 404, 409) }), summary: 'Change a workspace' },
    })
    .post(
      '/:ws/keys',
      async ({ body, set, workspace }) => {
        const issued = await keys.issue(workspace, body.name, body.scope)
        set.status = 201
        return { id: issued.id, name: issued.name, prefix: issued.prefix, scope: issued.scope, key: issued.key }
      },
      {
        params: Ws,
        workspace: true,
        body: t.Object({ name: t.String({ minLength: 1, maxLength: 60 }), scope: t.Union([t.Literal('full'), t.Literal('build'), t.Literal('read')]) }, { additionalProperties: false }),
        detail: {
          responses: answers({ 201: t.Object({ id: t.String(), name: t.String(), prefix: t.String(), scope: t.String(), key: t.String() }), ...consoleErrors(400, 404) }),
          summary: 'Create an API key for a workspace',
        },
      },
    )
    .delete(
      '/:ws/keys/:keyId',
      async ({ params, set, workspace }) => {
        await keys.revoke(workspace.id, params.keyId)
        set.status = 204
        return null
      },
      {
        params: t.Object({ ws: t.String(), keyId: t.String() }),
        workspace: true,
        detail: { responses: answers({ 204: t.Null(), ...consoleErrors(404) }), summary: 'Revoke a key of a workspace at once (the demo key included)' },
      },
    )
}
