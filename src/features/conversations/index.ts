/** Conversations: the inbox, the conversation engine every channel uses, the model resolver, test chat. */
import { agentsFeature } from '../agents'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { knowledgeFeature } from '../knowledge'
import { usageFeature } from '../usage'
import { byokFeature } from '../byok'
import { conversationsConsole } from './console'
import { conversationsSpec, messagesSpec } from './repository'
import { testChatV1 } from './test-chat-v1'
import { conversationsV1 } from './v1'
import { buildConversationFeature } from './wiring'

export const conversationsFeature = defineFeature({
  name: 'conversations',
  async build(kernel, use) {
    const { agents } = use(agentsFeature)
    const { knowledge } = use(knowledgeFeature)
    const { meter } = use(usageFeature)
    const { runtime: byok } = use(byokFeature)
    const { config, store, clock, coordination, bus } = kernel
    const built = await buildConversationFeature({ config, store, clock, coordination, bus, meter, byok, agents, knowledge })
    // Messages before their conversation.
    kernel.customerHooks.onErased(eraseCollections(store, [messagesSpec, conversationsSpec]), 'conversations erased')
    return {
      services: built,
      v1: [
        testChatV1({ context: kernel.http.v1, testChat: built.testChat }),
        conversationsV1({ context: kernel.http.v1, conversations: built.conversations, coordination, clock }),
      ],
      console: [conversationsConsole({ auth: kernel.http.console, conversations: built.conversations })],
    }
  },
})

// Re-exported for other features (they import from this index, never from inner files).
export { CHANNELS, presentMessage, type ConversationDoc, type MessageDoc, type MessagePart } from './model'
export { messageText } from './memory'
export { conversationsSpec, messagesSpec } from './repository'

// Re-exported for other features (they import from this index, never from inner files).
export type { ConversationFeature } from './wiring'
export type { CallbackRequest } from './tool-runner'
