/** Conversations: the inbox, the conversation engine every channel uses, the model resolver, test chat. */

import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { byokRef } from '../byok/public'
import { knowledgeRef } from '../knowledge/public'
import { usageRef } from '../usage/public'
import { conversationsConsole } from './console'
import { conversationsRef } from './public'
import { conversationsSpec, messagesSpec } from './repository'
import { testChatV1 } from './test-chat-v1'
import { conversationsV1 } from './v1'
import { buildConversationFeature } from './wiring'

export const conversationsFeature = defineFeature(conversationsRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const { knowledge } = use(knowledgeRef)
    const { meter } = use(usageRef)
    const { runtime: byok } = use(byokRef)
    const { config, store, clock, coordination, bus, logger } = kernel
    const built = await buildConversationFeature({ config, store, clock, coordination, bus, meter, byok, agents, knowledge, logger })
    // Messages before their conversation.
    kernel.customerHooks.onErased(eraseCollections(store, [messagesSpec, conversationsSpec]), 'conversations erased')
    return {
      services: built,
      v1: [testChatV1({ context: kernel.http.v1, testChat: built.testChat }), conversationsV1({ context: kernel.http.v1, conversations: built.conversations, coordination, clock })],
      console: [conversationsConsole({ auth: kernel.http.console, conversations: built.conversations })],
    }
  },
})
