/**
 * Conversations and messages as stored, with an index for every query the feature makes:
 * the v1 lists, the engine's memory, analytics' windows and the agent-delete cascade.
 */
import type { Collection, CollectionSpec, DocumentStore } from '../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../store/workspace-scoped'
import type { ConversationDoc, MessageDoc } from './model'

// GET /conversations, newest first: workspace_created (the port's page order is createdAt desc, id desc).
export const conversationsSpec: CollectionSpec = workspaceSpec('conversations', [
  // GET /conversations?channel=…
  {
    name: 'workspace_channel_created',
    fields: [
      ['workspaceId', 1],
      ['channel', 1],
      ['createdAt', -1],
      ['id', -1],
    ],
  },
  // GET /conversations?since=… (on when the customer last wrote)
  {
    name: 'workspace_inbound',
    fields: [
      ['workspaceId', 1],
      ['lastInboundAt', -1],
    ],
  },
  // Analytics windows per agent (counts and groups by day, hour, channel, status) and the cascade.
  {
    name: 'agent_created',
    fields: [
      ['workspaceId', 1],
      ['agentId', 1],
      ['createdAt', -1],
    ],
  },
  // A messaging thread's conversation (one per customer and number).
  {
    name: 'thread',
    fields: [
      ['workspaceId', 1],
      ['thread', 1],
    ],
  },
])

export const messagesSpec: CollectionSpec = {
  name: 'messages',
  indexes: [
    // GET /conversations/{id}/messages (internal notes filtered out) and the engine's memory.
    {
      name: 'conversation_created',
      fields: [
        ['conversationId', 1],
        ['internal', 1],
        ['createdAt', -1],
        ['id', -1],
      ],
    },
    // Analytics (messages, agent replies per day) and the cascade.
    {
      name: 'agent_created',
      fields: [
        ['workspaceId', 1],
        ['agentId', 1],
        ['createdAt', -1],
      ],
    },
    // Delivery receipts find the message a platform id refers to.
    { name: 'platform_id', fields: [['delivery.platformMessageId', 1]] },
  ],
}

export type ConversationRepo = WorkspaceCollection<ConversationDoc>
export type MessageRepo = Collection<MessageDoc>

export async function openConversations(store: DocumentStore): Promise<{ conversations: ConversationRepo; messages: MessageRepo }> {
  const [conversations, messages] = await Promise.all([store.collection<ConversationDoc>(conversationsSpec), store.collection<MessageDoc>(messagesSpec)])
  return { conversations: new WorkspaceCollection(conversations), messages }
}
