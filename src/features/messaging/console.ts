/** Console: `POST /console/workspaces/{ws}/inbound` — a message as if the customer wrote (DESIGN.md). */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../feature'
import type { WorkspaceService } from '../workspaces'
import type { InboundMessages } from './inbound'
import type { EmailInbound } from './email'
import type { BotInbound } from './botapp'

export function messagingConsole(deps: { auth: KernelHttp['console']; workspaces: WorkspaceService; inbound: InboundMessages; email: EmailInbound; bots: BotInbound }) {
  return new Elysia({ detail: { tags: ['Console'] } }).use(deps.auth).post(
    '/workspaces/:ws/inbound',
    async ({ params, body, set }) => {
      const workspace = await deps.workspaces.get(params.ws)
      set.status = 201
      if (body.channel === 'botapp') return deps.bots.receive(workspace, { from: body.from, to: body.to ?? null, text: body.text })
      if (body.channel === 'email') return deps.email.receive(workspace, { from: body.from, to: body.to ?? null, text: body.text })
      return deps.inbound.receive(workspace, { channel: body.channel, from: body.from, to: body.to ?? null, text: body.text })
    },
    {
      params: t.Object({ ws: t.String() }),
      body: t.Object(
        {
          channel: t.Union([t.Literal('chatapp'), t.Literal('botapp'), t.Literal('email')], { description: 'chatapp, botapp or email (web: the widget, not yet)' }),
          from: t.String({ description: "the customer's phone number (chatapp), chat id (botapp) or email address (email)" }),
          to: t.Optional(t.String({ description: "chatapp: our number (default the workspace's only one); botapp: the bot id (default the only bot); email: the agent (ag_…, default the only one)" })),
          text: t.String({ minLength: 1, maxLength: 4096 }),
        },
        { additionalProperties: false },
      ),
      detail: {
        summary: 'A message as if the customer wrote it (chat app, bot app or email)',
        responses: answers({ 201: t.Object({ conversationId: t.String(), messageId: t.String(), receivedAt: t.String() }), ...consoleErrors(400, 404, 409) }),
      },
    },
  )
}
