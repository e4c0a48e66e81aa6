/**
 * A person from the team writing to the customer from the console
 * (`POST /console/workspaces/{ws}/conversations/{id}/messages`), on the conversation's own channel:
 * the chat app and the bot app through their platform, email by mail, a website chat to the
 * visitor's open widget (the web feature's slot). The rules are the same on every channel: what
 * the channel cannot take is refused with a 409 naming why and changes nothing (a test chat or a
 * voice call; on the chat app a disconnected number, an opted-out customer, or the customer's
 * 24-hour window closed, as for `POST /conversations/{id}/reply`; a disconnected bot); a
 * platform's or mail server's refusal is a 502 with nothing stored. A message that goes takes the
 * conversation over (`handled`: the agent stays quiet), is stored with `author: teammate` and its
 * delivery, and — sent on a platform — is charged one `reply_charge` like an external agent's reply.
 */
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { EmailSender } from '../../providers/email'
import type { MessagingPlatform } from '../../providers/messaging/port'
import { clashes, notOffered, upstreamFailed } from '../../refusals'
import type { AgentService } from '../agents/public'
import type { ContactService } from '../contacts/public'
import { type ConversationDoc, type ConversationFeature, type MessageDoc, messageText } from '../conversations/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { Meter } from '../usage/public'
import type { BotConnections } from './bots'
import { assertWindowOpen, chargeReply, firstStatus, sendOn, threadBot, threadNumber } from './reply'

/** A website chat is at most 4,000 characters a message (docs/spec.md Limits), the chat apps 4,096: 4,000 fits every channel. */
export const TEAMMATE_TEXT_MAX = 4_000

type Delivery = { platformMessageId?: string; status: string; at: string }

export interface TeammateMessage {
  id: string
  conversationId: string
  channel: string
  author: 'teammate'
  text: string
  createdAt: string
  /** What the channel said: null for a website chat (the widget has no receipts). */
  delivery: Delivery | null
}

/** How the message leaves, decided (and every refusal made) before anything is sent or changed. */
type Route = { kind: 'platform'; platform: MessagingPlatform; from: string; to: string } | { kind: 'email'; to: string } | { kind: 'web' }

export class TeammateMessages {
  constructor(
    private readonly d: {
      conversations: ConversationFeature['conversations']
      numbers: PhoneNumberService
      contacts: ContactService
      platform: MessagingPlatform
      botPlatform: MessagingPlatform
      bots: BotConnections
      agents: AgentService
      email: EmailSender
      /** The website channel's slot (console.ts WebInboundSlot), filled by the web feature. */
      web: { show: ((conversation: ConversationDoc, message: MessageDoc) => Promise<void>) | null }
      meter: Pick<Meter, 'charge'>
      clock: Clock
    },
  ) {}

  async write(workspace: WorkspaceDoc, conversationId: string, text: string): Promise<TeammateMessage> {
    const d = this.d
    let conversation = await d.conversations.get(workspace.id, conversationId)
    const route = await this.route(workspace, conversation)
    const delivery = await this.send(workspace, conversation, route, text)
    if (conversation.status !== 'handled') conversation = await d.conversations.takeOver(workspace.id, conversationId)
    // Stored with its delivery in one write: a crash never keeps a sent message without it.
    const { message } = await d.conversations.addMessage(conversation, { author: 'teammate', parts: [{ type: 'text', text }], extra: delivery ? { delivery } : {} })
    if (route.kind === 'platform') await chargeReply(d.meter, workspace, conversation, message.id, null, d.clock.now())
    if (route.kind === 'web') await d.web.show!(conversation, message)
    return { id: message.id, conversationId: conversation.id, channel: conversation.channel, author: 'teammate', text: messageText(message), createdAt: message.createdAt, delivery }
  }

  private async route(workspace: WorkspaceDoc, conversation: ConversationDoc): Promise<Route> {
    const d = this.d
    if (conversation.test) throw clashes(`conversation ${conversation.id} is a test chat: nobody is on the other end to write to`)
    if (conversation.channel === 'voice') throw clashes(`conversation ${conversation.id} is a voice call: a written message cannot reach the caller`)
    if (conversation.channel === 'web') {
      if (!d.web.show) throw notOffered('website chat is not built into this service')
      return { kind: 'web' }
    }
    // chatapp:{our number}:{phone}, botapp:{bot}:{chat id}, email:{agent}:{address}
    const [, ours = '', ...rest] = String(conversation.thread ?? '').split(':')
    const customer = rest.join(':')
    if (!ours || !customer) throw clashes(`conversation ${conversation.id} has no customer to write to`)
    if (conversation.channel === 'email') return { kind: 'email', to: customer }
    if (conversation.channel === 'botapp') {
      await threadBot(d.bots, workspace, ours)
      return { kind: 'platform', platform: d.botPlatform, from: ours, to: customer }
    }
    await threadNumber(d.numbers, workspace, ours)
    if ((await d.contacts.findByPhone(workspace.id, customer))?.optedOut) throw clashes(`${customer} opted out of messages`)
    assertWindowOpen(conversation, d.clock.now(), 'only a template can reach the customer now (POST /conversations/{id}/reply)')
    return { kind: 'platform', platform: d.platform, from: ours, to: customer }
  }

  /** Hands the text to the channel; what it said, or null for the widget (shown once stored). */
  private async send(workspace: WorkspaceDoc, conversation: ConversationDoc, route: Route, text: string): Promise<Delivery | null> {
    const d = this.d
    if (route.kind === 'web') return null
    if (route.kind === 'platform') {
      const sent = await sendOn(route.platform, { from: route.from, to: route.to, content: { type: 'text', text } })
      return { platformMessageId: sent.platformMessageId, status: firstStatus(route.platform), at: iso(d.clock.now()) }
    }
    // The subject the agent's own answers carry, so the customer's mail program keeps one thread.
    const agent = await d.agents.find(conversation.agentId)
    try {
      await d.email.send({ to: route.to, subject: `Re: your message to ${agent?.name ?? workspace.name}`, text, workspaceId: workspace.id })
    } catch (err) {
      const code = (err as { code?: unknown }).code
      throw upstreamFailed(`the mail server refused the message: ${(err as Error).message}`, { code: code ?? null })
    }
    return { status: 'sent', at: iso(d.clock.now()) }
  }
}
