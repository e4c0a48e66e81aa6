/**
 * Conversations and their messages: starting one, recording what each side wrote, status moves
 * the agent and the team make (with their events), the v1 lists, and the agent-delete cascade.
 * The conversation engine (engine.ts) writes through this service; nothing here runs a model.
 */
import { type Clock, iso } from '../../clock'
import type { DomainEvent, EventBus } from '../../events/bus'
import { newId } from '../../ids'
import { checkInstant } from '../../instant'
import { notThere } from '../../refusals'
import type { DocumentStore, Filter, PageAfter, Write } from '../../store/port'
import { type ScopedFilter, WorkspaceCollection } from '../../store/workspace-scoped'
import type { Author, Channel, ConversationDoc, ConversationStatus, MessageDoc, MessagePart } from './model'
import type { ConversationRepo, MessageRepo } from './repository'

export interface StartConversation {
  workspaceId: string
  agentId: string
  channel: Channel
  customer?: { id: string | null; phone: string | null }
  test?: boolean
  /** A simulations run's conversation (docs/api/simulations.md): never billed, kept out of analytics. */
  simulated?: boolean
  /** A messaging thread (`<channel>:<our number>:<customer>`): one conversation per customer and number. */
  thread?: string
}

export interface NewMessage {
  author: Author
  parts: MessagePart[]
  internal?: boolean
  /** Stored beside the message (agent replies: tools, model, usage). */
  extra?: Pick<MessageDoc, 'tools' | 'model' | 'usage' | 'agentVersion'> | Record<string, unknown>
  /** Writes committed together with the message (work it leaves owed: an answer to send). */
  also?: (message: MessageDoc) => Write[]
}

export class ConversationService {
  /** Turns a stored `file:<id>` media reference into a link (set by the messaging feature). */
  mediaLink: ((ref: string) => string) | null = null

  constructor(
    private readonly conversations: ConversationRepo,
    private readonly messages: MessageRepo,
    private readonly clock: Clock,
    private readonly bus: EventBus,
    private readonly store: Pick<DocumentStore, 'commit'>,
  ) {}

  async start(input: StartConversation): Promise<ConversationDoc> {
    const now = iso(this.clock.now())
    const id = newId('conv')
    const customer = input.customer ?? { id: null, phone: null }
    const doc: ConversationDoc = {
      id,
      workspaceId: input.workspaceId,
      agentId: input.agentId,
      channel: input.channel,
      customer,
      customerKey: customer.id ?? customer.phone ?? `conv:${id}`,
      status: 'active',
      test: input.test ?? false,
      ...(input.simulated ? { simulated: true as const } : {}),
      lastInboundAt: null,
      ...(input.thread ? { thread: input.thread } : {}),
      createdAt: now,
      updatedAt: now,
    }
    await this.conversations.in(input.workspaceId).insert(doc)
    return doc
  }

  /** The conversation of a messaging thread, opened on its first message. */
  async thread(input: StartConversation & { thread: string }): Promise<ConversationDoc> {
    return (await this.conversations.in(input.workspaceId).findOne({ thread: input.thread })) ?? this.start(input)
  }

  /** The conversation of a messaging thread, or null before its first message. */
  byThread(workspaceId: string, thread: string): Promise<ConversationDoc | null> {
    return this.conversations.in(workspaceId).findOne({ thread })
  }

  /** What the platform said about a message we sent (receipts move it forward only). */
  async setDelivery(messageId: string, delivery: { platformMessageId?: string; status: string; at: string; error?: { code: string; message: string } }): Promise<void> {
    await this.messages.update(messageId, { delivery })
  }

  /** Messages of a workspace's chat-app conversations written in [from, to) (messaging totals). */
  async chatMessages(workspaceId: string, from: string, to: string): Promise<MessageDoc[]> {
    const out: MessageDoc[] = []
    for (const c of await this.conversations.in(workspaceId).find({ channel: 'chatapp' })) {
      out.push(...(await this.messages.find({ conversationId: c.id, internal: false, createdAt: { $gte: from, $lt: to } })))
    }
    return out
  }

  message(id: string): Promise<MessageDoc | null> {
    return this.messages.get(id)
  }

  /**
   * Messages the agent or a teammate wrote in conversations on `channels` at or before `before`
   * that carry no delivery, oldest conversation first: what a crash left unresolved (messaging's boot pass).
   */
  async undelivered(channels: Channel[], before: string): Promise<MessageDoc[]> {
    const out: MessageDoc[] = []
    for (const channel of channels) {
      for (const c of await this.conversations.acrossWorkspaces.find({ channel })) {
        out.push(...(await this.messages.find({ conversationId: c.id, internal: false, author: { $in: ['agent', 'teammate'] }, delivery: { $exists: false }, createdAt: { $lte: before } })))
      }
    }
    return out
  }

  /** The message a platform id refers to (receipts). */
  byPlatformId(platformMessageId: string): Promise<MessageDoc | null> {
    return this.messages.findOne({ 'delivery.platformMessageId': platformMessageId })
  }

  /** Another workspace's conversation is the same 404 as none at all (docs/spec.md Errors). */
  async get(workspaceId: string, id: string): Promise<ConversationDoc> {
    const doc = await this.conversations.in(workspaceId).get(id)
    if (!doc) throw notThere(`no conversation ${id} in this workspace`)
    return doc
  }

  /** The conversation if it is this workspace's, else null. */
  findIn(workspaceId: string, id: string): Promise<ConversationDoc | null> {
    return this.conversations.in(workspaceId).get(id)
  }

  /** By id in any workspace: work that names a conversation it recorded (a queued answer). */
  find(id: string): Promise<ConversationDoc | null> {
    return this.conversations.acrossWorkspaces.get(id)
  }

  list(workspaceId: string, query: { channel?: Channel; since?: string }, limit: number, after: PageAfter | null): Promise<ConversationDoc[]> {
    const filter: ScopedFilter = {}
    if (query.channel !== undefined) filter.channel = query.channel
    if (query.since !== undefined) filter.lastInboundAt = { $gte: checkInstant(query.since, 'since') }
    return this.conversations.in(workspaceId).page(filter, limit, after)
  }

  /** Public messages, newest first; `since` keeps those written strictly after it. */
  listMessages(conversationId: string, query: { since?: string }, limit: number, after: PageAfter | null): Promise<MessageDoc[]> {
    const filter: Filter = { conversationId, internal: false }
    if (query.since !== undefined) filter.createdAt = { $gt: checkInstant(query.since, 'since') }
    return this.messages.page(filter, limit, after)
  }

  /** The newest `limit` public messages, oldest first: the engine's memory. */
  async history(conversationId: string, limit: number): Promise<MessageDoc[]> {
    const rows = await this.messages.find(
      { conversationId, internal: false },
      {
        sort: [
          ['createdAt', -1],
          ['id', -1],
        ],
        limit,
      },
    )
    return rows.reverse()
  }

  /**
   * Records a message. A customer message moves `lastInboundAt` and reopens a resolved
   * conversation (the customer is back, so the agent answers again). With `event`, the event that
   * reports the message is recorded in the same commit and then dispatched (EventBus.publishWith);
   * `input.also`'s writes go in that commit too.
   */
  async addMessage(conversation: ConversationDoc, input: NewMessage, event?: (message: MessageDoc) => DomainEvent): Promise<{ message: MessageDoc; conversation: ConversationDoc }> {
    const now = iso(this.clock.now())
    const message: MessageDoc = {
      id: newId('msg'),
      conversationId: conversation.id,
      workspaceId: conversation.workspaceId,
      agentId: conversation.agentId,
      author: input.author,
      parts: input.parts,
      internal: input.internal ?? false,
      ...(conversation.simulated ? { simulated: true as const } : {}),
      ...(input.extra ?? {}),
      createdAt: now,
    }
    const set: Record<string, unknown> = { updatedAt: now }
    if (input.author === 'customer' && !message.internal) {
      set.lastInboundAt = now
      if (conversation.status === 'resolved') set.status = 'active'
    }
    let updated: ConversationDoc | null
    const writes: Write[] = [
      { collection: this.messages.name, op: 'insert', doc: message },
      { collection: this.conversations.name, op: 'update', id: conversation.id, set },
      ...(input.also?.(message) ?? []),
    ]
    if (event) {
      const { results } = await this.bus.publishWith(event(message), writes)
      updated = results[1] as ConversationDoc | null
    } else if (writes.length > 2) {
      updated = (await this.store.commit(writes))[1] as ConversationDoc | null
    } else {
      await this.messages.insert(message)
      updated = await this.conversations.in(conversation.workspaceId).update(conversation.id, set)
    }
    return { message, conversation: (updated ?? { ...conversation, ...set }) as ConversationDoc }
  }

  /**
   * A spoken reply the caller interrupted: the stored text becomes what they heard (the voice
   * pipeline's barge-in), so the agent's memory holds only that. An empty text leaves the message
   * marked as not heard at all (internal: kept for the record, out of the model's memory).
   */
  async reviseMessage(messageId: string, text: string): Promise<void> {
    const set: Record<string, unknown> = text ? { parts: [{ type: 'text', text }], interrupted: true } : { internal: true, interrupted: true }
    await this.messages.update(messageId, set)
  }

  /**
   * The agent hands the conversation to the team. Only an `active` one moves (and emits
   * `conversation.escalated`); one already waiting for or with a person stays as it is.
   */
  async escalate(conversation: ConversationDoc, reason: string | null): Promise<{ conversation: ConversationDoc; changed: boolean }> {
    const current = (await this.conversations.in(conversation.workspaceId).get(conversation.id)) ?? conversation
    if (current.status !== 'active') return { conversation: current, changed: false }
    // Payload (docs/spec.md leaves it to us): which conversation, where, why, and whether it is a test.
    const updated = await this.setStatus(current, 'escalated', (c) => ({
      type: 'conversation.escalated',
      workspaceId: c.workspaceId,
      agentId: c.agentId,
      data: { conversationId: c.id, channel: c.channel, test: c.test, ...(c.simulated ? { simulated: true } : {}), reason, status: c.status },
    }))
    return { conversation: updated, changed: true }
  }

  /** A teammate takes the conversation over (console); the agent stops answering. */
  async takeOver(workspaceId: string, id: string): Promise<ConversationDoc> {
    return this.setStatus(await this.get(workspaceId, id), 'handled')
  }

  /** A teammate marks it done (console); emits `conversation.resolved` when it changes. */
  async resolve(workspaceId: string, id: string): Promise<ConversationDoc> {
    const current = await this.get(workspaceId, id)
    if (current.status === 'resolved') return current
    return this.setStatus(current, 'resolved', (c) => ({
      type: 'conversation.resolved',
      workspaceId: c.workspaceId,
      agentId: c.agentId,
      data: { conversationId: c.id, channel: c.channel, test: c.test, ...(c.simulated ? { simulated: true } : {}), status: c.status },
    }))
  }

  /**
   * The call a voice conversation belongs to is over: nobody can speak in it any more, so one the
   * agent was carrying (`active`) is `resolved`. One escalated (waiting for a person to call back) or
   * taken over by a teammate stays as it is. No `conversation.resolved` event: that one reports a
   * teammate's decision (docs/api/webhooks.md), and `call.completed` already reports this end.
   */
  async callEnded(id: string): Promise<void> {
    const current = await this.conversations.acrossWorkspaces.get(id)
    if (current?.channel === 'voice' && current.status === 'active') await this.setStatus(current, 'resolved')
  }

  /** Agent delete cascade: its conversations and every message in them. */
  async removeAllForAgent(workspaceId: string, agentId: string): Promise<void> {
    await new WorkspaceCollection(this.messages).in(workspaceId).deleteMany({ agentId })
    await this.conversations.in(workspaceId).deleteMany({ agentId })
  }

  /** Moves the status; with `event`, the event reporting the move is committed with it (EventBus.publishWith). */
  private async setStatus(conversation: ConversationDoc, status: ConversationStatus, event?: (moved: ConversationDoc) => DomainEvent): Promise<ConversationDoc> {
    const set = { status, updatedAt: iso(this.clock.now()) }
    const moved = { ...conversation, ...set }
    if (!event) return ((await this.conversations.in(conversation.workspaceId).update(conversation.id, set)) ?? moved) as ConversationDoc
    const { results } = await this.bus.publishWith(event(moved), [{ collection: this.conversations.name, op: 'update', id: conversation.id, set }])
    return (results[0] ?? moved) as ConversationDoc
  }
}
