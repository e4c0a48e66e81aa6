/**
 * The agent answering a stored customer message on a chat channel, in the background: the
 * conversation engine writes the reply, a transport sends it (the messaging platform, or email),
 * and the reply's message records what the transport said (`delivery`). Every inbound chat path
 * (chat app, bot app, email) uses it, and it answers only as the published agent; `settled()`
 * lets shutdown and tests wait for answers under way.
 *
 * An answer is owed from the moment the customer's message is stored: the message's commit records
 * it (`owed_answers`, events/owed-work.ts), so an answer the process was killed in the middle of is
 * finished by whoever takes the record over (this service's next start, or another instance within
 * PRESENCE_TTL_MS of its death). Each step is written before it is taken, so a resumed answer
 * repeats nothing the customer could see twice:
 * - `answering`: no reply stored yet; the engine writes one (its commit moves the record to
 *   `replied`);
 * - `replied`: the reply is stored, not yet handed to the transport; it is sent;
 * - `sending`: it was being handed over when the process died, and whether the platform took it
 *   cannot be told (WhatsApp, Telegram and SMTP offer no look-up by anything we hold before their
 *   answer): it is not sent again, and its `delivery` becomes `unknown`. On WhatsApp a later
 *   receipt still finds it: the reply's id goes with it as `biz_opaque_callback_data`.
 * The record goes once the reply's delivery is written (or the agent stays quiet).
 */
import { type Clock, iso } from '../../clock'
import { crashPoint } from '../../crash-points'
import type { OwedItem, OwedWork } from '../../events/owed-work'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { Write } from '../../store/port'
import type { AgentDoc } from '../agents/public'
import { type ConversationDoc, type ConversationFeature, type MessageDoc, messageText } from '../conversations/public'

/** Where a reply goes: stored with the owed answer, so another instance can send it. */
export type ReplyTarget = { channel: 'chatapp'; from: string; to: string } | { channel: 'botapp'; bot: string; chat: string } | { channel: 'email'; address: string }

/** Sends the reply text; resolves with the platform's id for it (receipts refer to it), if any. */
export type SendReply = (target: ReplyTarget, reply: { id: string; text: string }, agentName: string, workspaceId: string) => Promise<{ platformMessageId?: string; status: string }>

export interface OwedAnswer extends OwedItem {
  /** The customer's message it answers. */
  id: string
  workspaceId: string
  agentId: string
  conversationId: string
  target: ReplyTarget
  stage: 'answering' | 'replied' | 'sending'
  replyId?: string
  agentName?: string
  createdAt: string
}

/** What a reply whose hand-over a crash interrupted says (docs/api/messaging.md). */
export const INTERRUPTED = {
  code: 'interrupted',
  message: 'the service stopped while handing this reply to the platform; whether the customer got it cannot be told',
}

export class AgentAnswers {
  private readonly running = new Set<Promise<void>>()
  /** Set once the owed-answer ledger is open (index.ts). */
  owed: OwedWork<OwedAnswer> | null = null

  constructor(
    private readonly d: {
      /** The agent as published; null when it is gone or nothing is published (versions feature). */
      published: (workspaceId: string, agentId: string) => Promise<AgentDoc | null>
      workspace: (id: string) => Promise<WorkspaceDoc | null>
      conversations: ConversationFeature['conversations']
      engine: ConversationFeature['engine']
      send: SendReply
      clock: Clock
      logger: Logger
    },
  ) {}

  /** The write that owes an answer to the message it is committed with (addMessage's `also`). */
  owe(conversation: ConversationDoc, agentId: string, target: ReplyTarget): (message: MessageDoc) => Write[] {
    return (message) => [this.owed!.owe({ id: message.id, workspaceId: conversation.workspaceId, agentId, conversationId: conversation.id, target, stage: 'answering', createdAt: message.createdAt })]
  }

  /** Starts the answer owed to `recorded` (stored with `owe`); does not wait for it. */
  start(workspace: WorkspaceDoc, agentId: string, recorded: { message: MessageDoc; conversation: ConversationDoc }, target: ReplyTarget): void {
    // The message is stored (its 201 may be on its way) and its answer not begun.
    crashPoint('answer.started')
    this.track(this.answer(workspace, agentId, recorded, target))
  }

  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running])
  }

  /**
   * A simulations run's answer (InboundMessages.simulated): written by the engine as the run's
   * target agent with tools as in test chat; owed nowhere and sent nowhere, since a simulated
   * customer is on no platform.
   */
  async simulated(workspace: WorkspaceDoc, agent: AgentDoc, recorded: { message: MessageDoc; conversation: ConversationDoc }): Promise<string> {
    const turn = await this.d.engine.respond({ workspace, agent, conversation: recorded.conversation, text: messageText(recorded.message), recorded, sideEffects: 'simulated' })
    return turn.reply
  }

  /** An answer taken over from a stopped instance (events/owed-work.ts): carried on from its stage. */
  readonly resume = async (item: OwedAnswer): Promise<void> => {
    const d = this.d
    const workspace = await d.workspace(item.workspaceId)
    if (!workspace) return this.owed!.done(item.id)
    if (item.stage === 'answering') {
      const [message, conversation] = await Promise.all([d.conversations.message(item.id), d.conversations.find(item.conversationId)])
      if (!message || !conversation) return this.owed!.done(item.id)
      return this.track(this.answer(workspace, item.agentId, { message, conversation }, item.target))
    }
    const reply = item.replyId ? await d.conversations.message(item.replyId) : null
    if (!reply || reply.delivery) return this.owed!.done(item.id)
    if (item.stage === 'replied') return this.track(this.deliver(item.id, reply, item.agentName ?? '', item.target, workspace.id))
    d.logger.warn({ workspace: workspace.id, conversation: item.conversationId, message: reply.id }, 'a reply was being sent when the service stopped: its delivery is unknown')
    await d.conversations.setDelivery(reply.id, { status: 'unknown', at: iso(d.clock.now()), error: INTERRUPTED })
    await this.owed!.done(item.id)
  }

  private track(work: Promise<void>): void {
    const running = work.finally(() => this.running.delete(running))
    this.running.add(running)
  }

  private async answer(workspace: WorkspaceDoc, agentId: string, recorded: { message: MessageDoc; conversation: ConversationDoc }, target: ReplyTarget): Promise<void> {
    const d = this.d
    const id = recorded.message.id
    try {
      // Only a published agent talks (docs/spec.md Agent publication): the message stays in the
      // conversation (message.received went out already) and waits for a person or a reply.
      const agent = await d.published(workspace.id, agentId)
      if (!agent) {
        d.logger.info({ workspace: workspace.id, agent: agentId, conversation: recorded.conversation.id }, 'a message reached an agent with nothing published: kept, not answered')
        return await this.owed!.done(id)
      }
      const turn = await d.engine.respond({
        workspace,
        agent,
        conversation: recorded.conversation,
        text: messageText(recorded.message),
        recorded,
        sideEffects: 'live',
        replyAlso: (reply) => [this.owed!.stage(id, { stage: 'replied', replyId: reply.id, agentName: agent.name })],
      })
      if (!turn.answered || !turn.replyMessage) return await this.owed!.done(id)
      await this.deliver(id, turn.replyMessage, agent.name, target, workspace.id)
    } catch (err) {
      // A model or provider failure: the message stays unanswered, as in any inbox (engine.ts). A
      // failure after the reply was stored (its charge) still sends the reply.
      d.logger.warn({ err, workspace: workspace.id, agent: agentId }, 'the agent could not answer a message')
      const item = await this.owed!.items.get(id).catch(() => null)
      const reply = item?.stage === 'replied' && item.replyId ? await d.conversations.message(item.replyId).catch(() => null) : null
      if (reply && item) return this.deliver(id, reply, item.agentName ?? '', target, workspace.id)
      await this.owed!.done(id).catch(() => {})
    }
  }

  /** Hands the stored reply to its transport, once: the `sending` stage is written first. */
  private async deliver(id: string, reply: MessageDoc, agentName: string, target: ReplyTarget, workspaceId: string): Promise<void> {
    const d = this.d
    try {
      await this.owed!.update(id, { stage: 'sending' })
      crashPoint('answer.sending')
      try {
        const sent = await d.send(target, { id: reply.id, text: messageText(reply) }, agentName, workspaceId)
        crashPoint('answer.sent')
        await d.conversations.setDelivery(reply.id, { ...sent, at: iso(d.clock.now()) })
      } catch (err) {
        const code = (err as { code?: unknown }).code
        await d.conversations.setDelivery(reply.id, {
          status: 'failed',
          at: iso(d.clock.now()),
          error: { code: code === undefined || code === null ? 'refused' : String(code), message: (err as Error).message },
        })
      }
      await this.owed!.done(id)
    } catch (err) {
      // The store failed: the record stays, and the next owner of this instance's work finishes it.
      d.logger.error({ err, message: reply.id }, "could not record a reply's delivery")
    }
  }
}
