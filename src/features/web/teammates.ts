/**
 * A person from the team talking to a website visitor: once the console has written a teammate's
 * message into a web conversation (messaging's teammate route, which takes it over), the visitor's
 * open widget receives it at once on its events stream. Messages travel on the coordination
 * channel of the visitor's thread (`web-visitor:web:{agent}:{visitor}`), so the teammate and the
 * visitor may be on different instances, and a widget can listen before its first message.
 */
import type { Coordination } from '../../coordination/port'
import type { ConversationDoc, MessageDoc } from '../conversations/public'
import { messageText } from '../conversations/public'

export const visitorChannel = (thread: string) => `web-visitor:${thread}`

/** What the widget shows of a message. */
export const presentWebMessage = (m: MessageDoc) => ({ id: m.id, author: m.author, text: messageText(m), createdAt: m.createdAt })
export type WebMessage = ReturnType<typeof presentWebMessage>

export class TeammateMessages {
  constructor(private readonly d: { coordination: Coordination }) {}

  /** Shows a teammate's stored message in the visitor's open widget (messaging's console route writes it). */
  async show(conversation: ConversationDoc, message: MessageDoc): Promise<void> {
    await this.d.coordination.publish(visitorChannel(String(conversation.thread)), JSON.stringify(presentWebMessage(message)))
  }

  /** Calls `deliver` with each teammate message for the visitor's thread from now on; resolves to the unsubscribe. */
  follow(thread: string, deliver: (m: WebMessage) => void): Promise<() => Promise<void>> {
    return this.d.coordination.subscribe(visitorChannel(thread), (raw) => deliver(JSON.parse(raw) as WebMessage))
  }
}
