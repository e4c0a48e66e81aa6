/** Conversations (v1): list conversations and read a conversation's messages (SPEC.md Conversations). */
import { Elysia, t } from 'elysia'
import type { v1Context } from '../../http/context'
import { answers, errors } from '../../http/docs'
import { paginate, pageSchema } from '../../http/pagination'
import { Conversation, ListConversationsQuery, ListMessagesQuery, Message, presentConversation, presentMessage } from './model'
import type { ConversationService } from './service'

export function conversationsV1(deps: { context: ReturnType<typeof v1Context>; conversations: ConversationService }) {
  const { conversations } = deps
  return new Elysia({ prefix: '/conversations', detail: { tags: ['Conversations'] } })
    .use(deps.context)
    .get(
      '',
      ({ query, workspace }) =>
        paginate((limit, after) => conversations.list(workspace.id, query, limit, after), query, 25, presentConversation),
      {
        query: ListConversationsQuery,
        detail: { responses: answers({ 200: pageSchema(Conversation), ...errors(400) }),
          summary: 'List conversations, newest first',
          description: '`since` keeps conversations whose customer last wrote at or after it. Test chats are listed too, on channel `web` with `test: true`.',
        },
      },
    )
    .get(
      '/:id/messages',
      async ({ params, query, workspace }) => {
        const conversation = await conversations.get(workspace.id, params.id)
        return paginate((limit, after) => conversations.listMessages(conversation.id, query, limit, after), query, 25, presentMessage)
      },
      {
        params: t.Object({ id: t.String() }),
        query: ListMessagesQuery,
        detail: { responses: answers({ 200: pageSchema(Message), ...errors(400, 404) }), summary: 'Read a conversation’s messages, newest first', description: '`since` keeps messages written after it. Internal team notes are never included.' },
      },
    )
}
