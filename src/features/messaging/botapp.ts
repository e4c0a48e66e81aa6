/**
 * An inbound `botapp` message (a Telegram chat with a connected bot, or the console's sandbox): it
 * opens or continues the conversation of that chat and bot (`channel: botapp`), records the message,
 * and then, as on the chat app: the bot's external agents on → `message.received` and the developer
 * answers with `POST /conversations/{id}/reply`; a teammate's takeover → quiet; else the bot's agent
 * answers on the platform. A Telegram chat is not a phone number, so no contact is made and opt-out
 * keywords record nothing (a Telegram user leaves by blocking the bot); no 24-hour window applies.
 */
import { SerialQueue } from '../../../actors/serial-queue'
import type { DomainEvent } from '../../events/bus'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { invalid } from '../../refusals'
import { type ConversationFeature, type MessageDoc, presentMessage } from '../conversations/public'
import type { AgentAnswers } from './answers'
import type { BotConnections } from './bots'
import { partsOf, type Received, receivedOf } from './inbound'

/** Telegram chat ids are integers (negative for groups); the sandbox takes the same shape. */
const CHAT_ID = /^-?\d{1,20}$/

export interface BotInput {
  /** The chat id. */
  from: string
  /** The bot id; the workspace's only bot when absent. */
  to: string | null
  text: string
  media?: { ref: string; type: 'image' | 'video' | 'audio' | 'file'; caption: string | null; name: string | null } | null
}

export class BotInbound {
  private readonly threads = new SerialQueue()

  constructor(
    private readonly d: {
      bots: BotConnections
      conversations: ConversationFeature['conversations']
      answers: AgentAnswers
    },
  ) {}

  async receive(workspace: WorkspaceDoc, input: BotInput): Promise<Received> {
    const d = this.d
    const chat = input.from.trim()
    if (!CHAT_ID.test(chat)) throw invalid('from', `"${input.from}" is not a chat id (digits)`)
    if (!input.text.trim() && !input.media) throw invalid('text', 'must not be blank')
    const bot = input.to ? await d.bots.get(workspace.id, input.to) : await d.bots.only(workspace.id)
    const thread = `botapp:${bot.id}:${chat}`
    return this.threads.run(thread, async () => {
      const conversation = await d.conversations.thread({ workspaceId: workspace.id, agentId: bot.agentId, channel: 'botapp', customer: { id: null, phone: null }, thread })
      // For external agents the message and its `message.received` commit together.
      const event = bot.externalAgents
        ? (message: MessageDoc): DomainEvent => ({
            type: 'message.received',
            workspaceId: workspace.id,
            agentId: bot.agentId,
            data: {
              ...receivedOf(message),
              channel: 'botapp',
              customer: { id: null, phone: null },
              parts: presentMessage(message, d.conversations.mediaLink ?? undefined).parts as Record<string, unknown>[],
            },
          })
        : undefined
      // The bot's agent answers unless the developer does or a teammate took over; owed in the message's commit.
      const target = { channel: 'botapp' as const, bot: bot.id, chat }
      const answering = !bot.externalAgents && conversation.status !== 'handled'
      const also = answering ? d.answers.owe(conversation, bot.agentId, target) : undefined
      const recorded = await d.conversations.addMessage(conversation, { author: 'customer', parts: partsOf(input), extra: { from: chat }, also }, event)
      if (answering) d.answers.start(workspace, bot.agentId, recorded, target)
      return receivedOf(recorded.message)
    })
  }
}
