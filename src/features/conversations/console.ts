/**
 * Console: a teammate takes a conversation over, resolves it, or escalates it (docs/design.md console
 * table). Resolve emits `conversation.resolved`; escalate emits `conversation.escalated` when the
 * conversation moves (an already escalated or handled one stays as it is).
 */
import { Elysia, t } from 'elysia'
import { NoBody } from '../../http/body-types'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { Conversation, presentConversation } from './model'
import type { ConversationService } from './service'

export function conversationsConsole(deps: { auth: KernelHttp['console']; conversations: ConversationService }) {
  const { conversations } = deps
  const params = t.Object({ ws: t.String(), id: t.String() })
  const doc = (summary: string) => ({ responses: answers({ 200: Conversation, ...consoleErrors(400, 404) }), summary })
  return new Elysia({ prefix: '/workspaces/:ws/conversations/:id', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post('/takeover', async ({ params, workspace }) => presentConversation(await conversations.takeOver(workspace.id, params.id)), {
      params,
      body: NoBody,
      workspace: true,
      detail: doc('A teammate takes the conversation over; the agent stops answering'),
    })
    .post('/resolve', async ({ params, workspace }) => presentConversation(await conversations.resolve(workspace.id, params.id)), {
      params,
      body: NoBody,
      workspace: true,
      detail: doc('A teammate marks the conversation done (emits conversation.resolved)'),
    })
    .post(
      '/escalate',
      async ({ params, workspace }) => {
        const current = await conversations.get(workspace.id, params.id)
        return presentConversation((await conversations.escalate(current, 'escalated by a teammate in the console')).conversation)
      },
      { params, body: NoBody, workspace: true, detail: doc('Hand the conversation to the team (emits conversation.escalated when it moves)') },
    )
}
