/** What other features may use of conversations: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { ConversationFeature } from './wiring'

export const conversationsRef = featureRef<ConversationFeature>('conversations')

export { CHANNELS, presentMessage, type ConversationDoc, type MessageDoc, type MessagePart } from './model'
export { messageText } from './memory'
export { conversationsSpec, messagesSpec } from './repository'
export type { ConversationFeature } from './wiring'
export type { CallbackRequest } from './tool-runner'
