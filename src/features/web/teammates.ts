/**
 * A person from the team talking to a website visitor: the console writes a teammate's
 * message into a web conversation (taking it over, so the agent stays quiet), and the visitor's
 * open widget receives it at once on its events stream. Messages travel on the coordination
 * channel of the visitor's thread (`web-visitor:web:{agent}:{visitor}`), so the teammate and the
 * visitor may be on different instances, and a widget can listen before its first message.
 */
import type { Coordination } from '../../coordination/port'
import { conflict } from '../../http/errors'
import { type ConversationFeature, type MessageDoc, messageText } from '../conversations/public'

export const visitorChannel = (thread: string) => `web-visitor:${thread}`

/** What the widget shows of a message. */
export const presentWebMessage = (m: MessageDoc) => ({ id: m.id, author: m.author, text: messageText(m), createdAt: m.createdAt })
export type WebMessage = ReturnType<typeof presentWebMessage>

export class TeammateMessages {
  constructor(
    private readonly d: {
      conversations: ConversationFeature['conversations']
      coordination: Coordination
    },
  ) {}

  /** Writes the teammate's message; the conversation is taken over first (the agent must not answer over a person). */
  async write(workspaceId: string, conversationId: string, text: string): Promise<WebMessage> {
    let conversation = await this.d.conversations.get(workspaceId, conversationId)
    if (conversation.channel !== 'web' || conversation.test) {
      throw conflict(
        `conversation ${conversationId} is not a website chat (channel ${conversation.channel}${conversation.test ? ', a test chat' : ''}); chat-app replies go through POST /conversations/{id}/reply`,
      )
    }
    if (conversation.status !== 'handled') conversation = await this.d.conversations.takeOver(workspaceId, conversationId)
    const { message } = await this.d.conversations.addMessage(conversation, { author: 'teammate', parts: [{ type: 'text', text }] })
    const shown = presentWebMessage(message)
    await this.d.coordination.publish(visitorChannel(String(conversation.thread)), JSON.stringify(shown))
    return shown
  }

  /** Calls `deliver` with each teammate message for the visitor's thread from now on; resolves to the unsubscribe. */
  follow(thread: string, deliver: (m: WebMessage) => void): Promise<() => Promise<void>> {
    return this.d.coordination.subscribe(visitorChannel(thread), (raw) => deliver(JSON.parse(raw) as WebMessage))
  }
}
