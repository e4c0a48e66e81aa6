/**
 * Console: `POST /console/workspaces/{ws}/inbound` — a message as if the customer wrote (docs/design.md);
 * `POST /console/workspaces/{ws}/conversations/{id}/messages` — a teammate writes to the customer on
 * the conversation's own channel (teammate.ts).
 */
import { Elysia, t } from 'elysia'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { invalid, notOffered } from '../../refusals'
import type { ConversationDoc, MessageDoc } from '../conversations/public'
import type { BotInbound } from './botapp'
import type { EmailInbound } from './email'
import type { InboundMessages } from './inbound'
import { TEAMMATE_TEXT_MAX, type TeammateMessages } from './teammate'

/** The website channel, set by the web feature (built after this one): its inbound, and showing a teammate's stored message in the visitor's open widget. */
export interface WebInboundSlot {
  receive: ((workspace: WorkspaceDoc, input: { from: string; to: string | null; text: string }) => Promise<{ conversationId: string; messageId: string; receivedAt: string }>) | null
  show: ((conversation: ConversationDoc, message: MessageDoc) => Promise<void>) | null
}

const TeammateMessage = t.Object({
  id: t.String(),
  conversationId: t.String(),
  channel: t.String({ description: 'web, chatapp, botapp or email' }),
  author: t.Literal('teammate'),
  text: t.String(),
  createdAt: t.String(),
  delivery: t.Nullable(
    t.Object(
      { platformMessageId: t.Optional(t.String()), status: t.String({ description: 'accepted (chat app), sent (bot app on Telegram, email)' }), at: t.String() },
      { description: 'null for a website chat' },
    ),
  ),
})

export function messagingConsole(deps: { auth: KernelHttp['console']; inbound: InboundMessages; email: EmailInbound; bots: BotInbound; web: WebInboundSlot; teammates: TeammateMessages }) {
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post(
      '/workspaces/:ws/conversations/:id/messages',
      async ({ params, body, set, workspace }) => {
        const text = body.text.trim()
        if (!text) throw invalid('text', 'must not be blank')
        const written = await deps.teammates.write(workspace, params.id, text)
        set.status = 201
        return written
      },
      {
        params: t.Object({ ws: t.String(), id: t.String() }),
        workspace: true,
        body: t.Object({ text: t.String({ minLength: 1, maxLength: TEAMMATE_TEXT_MAX }) }, { additionalProperties: false }),
        detail: {
          summary: 'A teammate writes to the customer on the conversation’s channel (website chat, chat app, bot app, email); it takes the conversation over',
          responses: answers({ 201: TeammateMessage, ...consoleErrors(400, 404, 409, 501, 502) }),
        },
      },
    )
    .post(
      '/workspaces/:ws/inbound',
      async ({ body, set, workspace }) => {
        set.status = 201
        if (body.channel === 'botapp') return deps.bots.receive(workspace, { from: body.from, to: body.to ?? null, text: body.text })
        if (body.channel === 'web') {
          if (!deps.web.receive) throw notOffered('website chat is not built into this service')
          return deps.web.receive(workspace, { from: body.from, to: body.to ?? null, text: body.text })
        }
        if (body.channel === 'email') return deps.email.receive(workspace, { from: body.from, to: body.to ?? null, text: body.text })
        return deps.inbound.receive(workspace, { channel: body.channel, from: body.from, to: body.to ?? null, text: body.text })
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        body: t.Object(
          {
            channel: t.Union([t.Literal('chatapp'), t.Literal('botapp'), t.Literal('web'), t.Literal('email')], { description: 'chatapp, botapp, web or email' }),
            from: t.String({ description: "the customer's phone number (chatapp), chat id (botapp), visitor id (web: letters, digits, - and _) or email address (email)" }),
            to: t.Optional(
              t.String({ description: "chatapp: our number (default the workspace's only one); botapp: the bot id (default the only bot); web and email: the agent (ag_…, default the only one)" }),
            ),
            text: t.String({ minLength: 1, maxLength: 4096 }),
          },
          { additionalProperties: false },
        ),
        detail: {
          summary: 'A message as if the customer wrote it (chat app, bot app, website chat or email)',
          responses: answers({ 201: t.Object({ conversationId: t.String(), messageId: t.String(), receivedAt: t.String() }), ...consoleErrors(400, 404, 409, 429, 501, 503) }),
        },
      },
    )
}
