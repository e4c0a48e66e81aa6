/**
 * `POST /conversations/{id}/reply` (SPEC.md): the developer's own agent answers a chat-app
 * conversation on a number with external agents on. Refusals, in the order a caller can fix them:
 * 404 no such conversation; 409 not a chat-app thread, number disconnected, external agents off,
 * taken over by a teammate, customer opted out, window closed (text, media and forms need the
 * customer to have written in the last 24 hours); 502 when the platform refuses (nothing stored,
 * the idempotency key released). The message is stored as the agent's with its delivery, and one
 * `reply_charge` goes into the ledger (10% of the platform's rate; priced when plans land).
 */
import { iso, type Clock } from '../../clock'
import { ApiError, conflict } from '../../http/errors'
import { newId } from '../../ids'
import { PlatformRefused, type MessagingPlatform } from '../../providers/messaging/port'
import type { ContactService } from '../contacts'
import type { ConversationFeature } from '../conversations'
import type { PhoneNumberService } from '../phone-numbers'
import type { UsageLedger } from '../usage'
import type { WorkspaceDoc } from '../workspaces'
import { replyContent, WINDOW_MS, type ReplyBody } from './reply-rules'

export interface ReplyDeps {
  conversations: ConversationFeature['conversations']
  numbers: PhoneNumberService
  contacts: ContactService
  platform: MessagingPlatform
  ledger: UsageLedger
  clock: Clock
}

export class Replies {
  constructor(private readonly deps: ReplyDeps) {}

  async reply(workspace: WorkspaceDoc, conversationId: string, body: ReplyBody): Promise<{ ok: true }> {
    const d = this.deps
    const conversation = await d.conversations.get(workspace.id, conversationId)
    const content = replyContent(body)
    const thread = typeof conversation.thread === 'string' ? conversation.thread.split(':') : null
    if (conversation.channel !== 'chatapp' || !thread) throw conflict(`conversation ${conversationId} is a ${conversation.channel} conversation; replies go to chat-app conversations`)
    const [, ours, customer] = thread as [string, string, string]
    const number = await d.numbers.byNumber(ours)
    if (!number || number.workspaceId !== workspace.id) throw conflict(`${ours} is no longer connected to this workspace`)
    if (!number.externalAgents) throw conflict(`external agents are off for ${ours}: its agent answers this conversation`)
    if (conversation.status === 'handled') throw conflict('a teammate took this conversation over')
    const contact = await d.contacts.findByPhone(workspace.id, customer)
    if (contact?.optedOut) throw conflict(`${customer} opted out of messages`)
    const now = d.clock.now()
    const last = conversation.lastInboundAt ? Date.parse(conversation.lastInboundAt) : null
    if (last === null || now - last > WINDOW_MS) throw conflict("the customer's 24-hour window is closed: send a template", { windowClosedAt: last === null ? null : iso(last + WINDOW_MS) })
    let sent
    try {
      sent = await d.platform.send({ from: ours, to: customer, content })
    } catch (err) {
      if (err instanceof PlatformRefused) throw new ApiError(502, `the messaging platform refused the message: ${err.message}`, { code: err.code })
      throw err
    }
    const parts = content.type === 'text' ? [{ type: 'text' as const, text: content.text }] : content.type === 'media' && content.media.type === 'image' ? [{ type: 'image' as const, url: content.media.url, alt: content.media.caption ?? null }] : [{ type: 'text' as const, text: content.type === 'media' ? content.media.url : '' }]
    const { message } = await d.conversations.addMessage(conversation, { author: 'agent', parts, extra: { external: true, ...(content.type === 'media' ? { media: content.media } : {}) } })
    await d.conversations.setDelivery(message.id, { platformMessageId: sent.platformMessageId, status: 'accepted', at: iso(now) })
    await d.ledger.records.insert({ id: newId('use'), workspaceId: workspace.id, developerId: workspace.parentId ?? workspace.id, kind: 'reply_charge', quantity: 1, costMicro: 0, conversationId, messageId: message.id, createdAt: iso(now) })
    return { ok: true }
  }
}
