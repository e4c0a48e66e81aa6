/**
 * The agent answering a stored customer message on a chat channel, in the background: the
 * conversation engine writes the reply, a transport sends it (the messaging platform, or email),
 * and the reply's message records what the transport said (`delivery`). Every inbound chat path
 * (chat app, bot app, email) uses it, and it answers only as the published agent; `settled()`
 * lets shutdown and tests wait for answers under way.
 */
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { AgentDoc } from '../agents/public'
import { type ConversationFeature, messageText } from '../conversations/public'

type Recorded = Awaited<ReturnType<ConversationFeature['conversations']['addMessage']>>

/** Sends the reply text; resolves with the platform's id for it (receipts refer to it), if any. */
export type SendReply = (text: string, agentName: string) => Promise<{ platformMessageId?: string; status: string }>

export class AgentAnswers {
  private readonly running = new Set<Promise<void>>()

  constructor(
    private readonly d: {
      /** The agent as published; null when it is gone or nothing is published (versions feature). */
      published: (workspaceId: string, agentId: string) => Promise<AgentDoc | null>
      conversations: ConversationFeature['conversations']
      engine: ConversationFeature['engine']
      clock: Clock
      logger: Logger
    },
  ) {}

  /** Starts the answer; does not wait for it. */
  start(workspace: WorkspaceDoc, agentId: string, recorded: Recorded, send: SendReply): void {
    const answer = this.answer(workspace, agentId, recorded, send).finally(() => this.running.delete(answer))
    this.running.add(answer)
  }

  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running])
  }

  private async answer(workspace: WorkspaceDoc, agentId: string, recorded: Recorded, send: SendReply): Promise<void> {
    const d = this.d
    try {
      // Only a published agent talks (docs/spec.md Agent publication): the message stays in the
      // conversation (message.received went out already) and waits for a person or a reply.
      const agent = await d.published(workspace.id, agentId)
      if (!agent)
        return void d.logger.info({ workspace: workspace.id, agent: agentId, conversation: recorded.conversation.id }, 'a message reached an agent with nothing published: kept, not answered')
      const turn = await d.engine.respond({ workspace, agent, conversation: recorded.conversation, text: messageText(recorded.message), recorded, sideEffects: 'live' })
      if (!turn.answered || !turn.replyMessage) return
      try {
        const sent = await send(turn.reply, agent.name)
        await d.conversations.setDelivery(turn.replyMessage.id, { ...sent, at: iso(d.clock.now()) })
      } catch (err) {
        const code = (err as { code?: unknown }).code
        await d.conversations.setDelivery(turn.replyMessage.id, {
          status: 'failed',
          at: iso(d.clock.now()),
          error: { code: code === undefined || code === null ? 'refused' : String(code), message: (err as Error).message },
        })
      }
    } catch (err) {
      d.logger.warn({ err, workspace: workspace.id, agent: agentId }, 'the agent could not answer a message')
    }
  }
}
