/** Console: what the service told a developer (docs/spec.md Events rule 8), newest first. */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import type { NotificationService } from './service'

const Notification = t.Object({
  id: t.String(),
  kind: t.String({ description: 'what happened, e.g. webhook.disabled' }),
  title: t.String({ description: "inside a customer: starts with the customer's name in brackets" }),
  body: t.String(),
  customer: t.Union([t.Object({ id: t.String(), name: t.String() }), t.Null()]),
  data: t.Record(t.String(), t.Unknown()),
  createdAt: t.String(),
})

export function notificationsConsole(deps: { auth: KernelHttp['console']; notifications: NotificationService }) {
  const { notifications } = deps
  return new Elysia({ prefix: '/workspaces/:ws/notifications', detail: { tags: ['Console'] } }).use(deps.auth).get(
    '',
    ({ query, workspace }) =>
      paginate(
        (limit, after) => notifications.list(workspace, limit, after),
        query,
        25,
        (d) => notifications.present(d),
      ),
    {
      params: t.Object({ ws: t.String() }),
      workspace: true,
      query: t.Object(pageQuery(100, 25)),
      detail: {
        responses: answers({ 200: pageSchema(Notification), ...consoleErrors(400, 404) }),
        summary: 'Notifications sent to the developer',
        description: "A developer workspace lists its own and every customer's (titles carry the customer's name); a customer's `org_` id lists only that customer's.",
      },
    },
  )
}
