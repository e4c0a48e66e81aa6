/** What other features may use of conversations: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { ConversationFeature } from './wiring'

export const conversationsRef = featureRef<ConversationFeature>('conversations')

export { messageText } from './memory'
export { CHANNELS, type ConversationDoc, type MessageDoc, type MessagePart, presentMessage } from './model'
export { buildSystemPrompt } from './prompt'
export { conversationsSpec, messagesSpec } from './repository'
export { TestChatAnswer, TestChatBody } from './test-chat-v1'
export type { CallbackRequest } from './tool-runner'
export { type ToolName, toolSpecs, toolsFor } from './tools'
export type { ConversationFeature } from './wiring'
