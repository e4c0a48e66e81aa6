/** Console: a teammate writes to a website visitor (`POST /console/workspaces/{ws}/conversations/{id}/messages`). */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import { badRequest } from '../../http/errors'
import type { KernelHttp } from '../../kernel/feature'
import { WEB_MESSAGE_MAX } from './limits'
import { WebMessage } from './model'
import type { TeammateMessages } from './teammates'

export function webConsole(deps: { auth: KernelHttp['console']; teammates: TeammateMessages }) {
  return new Elysia({ detail: { tags: ['Console'] } }).use(deps.auth).post(
    '/workspaces/:ws/conversations/:id/messages',
    async ({ params, body, set, workspace }) => {
      const text = body.text.trim()
      if (!text) throw badRequest('text', 'must not be blank')
      set.status = 201
      return deps.teammates.write(workspace.id, params.id, text)
    },
    {
      params: t.Object({ ws: t.String(), id: t.String() }),
      workspace: true,
      body: t.Object({ text: t.String({ minLength: 1, maxLength: WEB_MESSAGE_MAX }) }, { additionalProperties: false }),
      detail: {
        summary: 'A teammate writes to a website visitor (takes the conversation over; the open widget shows it at once)',
        responses: answers({ 201: WebMessage, ...consoleErrors(400, 404, 409) }),
      },
    },
  )
}
