/** Conversations (v1): list conversations and read a conversation's messages (docs/spec.md Conversations). */
import { Elysia, t } from 'elysia'
import { type RateRule, v1RateRule } from '../../catalog/limits'
import type { PlanId } from '../../catalog/plans'
import type { Clock } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { answers, v1Errors } from '../../http/docs'
import { pageSchema, paginate } from '../../http/pagination'
import { countRequest } from '../../http/rate-limit'
import type { KernelHttp } from '../../kernel/feature'
import { Conversation, ListConversationsQuery, ListMessagesQuery, Message, presentConversation, presentMessage } from './model'
import type { ConversationService } from './service'

/**
 * docs/spec.md Errors: GET conversations and messages answer 429 "too many requests": the plan's
 * `conversationReads` a minute (src/catalog/limits.ts), counted per key across both reads: enough for a
 * catch-up loop every few minutes (SPEC's recommended pattern), not for scraping every inbox.
 */
const readRate = (plan: PlanId): RateRule => v1RateRule('v1-conversations', 'conversationReads', plan)

export function conversationsV1(deps: { context: KernelHttp['v1']; conversations: ConversationService; coordination: Coordination; clock: Clock }) {
  const { conversations } = deps
  return new Elysia({ prefix: '/conversations', detail: { tags: ['Conversations'] } })
    .use(deps.context)
    .onBeforeHandle({ as: 'local' }, async ({ principal, set }) => {
      await countRequest(deps.coordination, readRate(principal.developer.plan), principal.key.id, deps.clock.now(), set.headers as Record<string, unknown>)
    })
    .get('', ({ query, workspace }) => paginate((limit, after) => conversations.list(workspace.id, query, limit, after), query, 25, presentConversation), {
      query: ListConversationsQuery,
      detail: {
        responses: answers({ 200: pageSchema(Conversation), ...v1Errors(400, 429) }),
        summary: 'List conversations, newest first',
        description: '`since` keeps conversations whose customer last wrote at or after it. Test chats are listed too, on channel `web` with `test: true`.',
      },
    })
    .get(
      '/:id/messages',
      async ({ params, query, workspace }) => {
        const conversation = await conversations.get(workspace.id, params.id)
        return paginate(
          (limit, after) => conversations.listMessages(conversation.id, query, limit, after),
          query,
          25,
          (m) => presentMessage(m, conversations.mediaLink ?? undefined),
        )
      },
      {
        params: t.Object({ id: t.String() }),
        query: ListMessagesQuery,
        detail: {
          responses: answers({ 200: pageSchema(Message), ...v1Errors(400, 404, 429) }),
          summary: 'Read a conversation’s messages, newest first',
          description: '`since` keeps messages written after it. Internal team notes are never included.',
        },
      },
    )
}
