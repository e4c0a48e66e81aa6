/**
 * `POST /conversations/{id}/reply` (docs/spec.md): the developer's own agent answers a chat-app
 * conversation on a number with external agents on. Refusals, in the order a caller can fix them:
 * 404 no such conversation; 409 not a chat-app thread, number disconnected, external agents off,
 * taken over by a teammate, customer opted out, window closed (text, media and forms need the
 * customer to have written in the last 24 hours); 502 when the platform refuses (nothing stored,
 * the idempotency key released). The message is stored as the agent's with its delivery, and one
 * `reply_charge` goes into the ledger (10% of the platform's rate for the message's category: a template's own, `service` for the rest).
 */

import type { MessageCategory } from '../../catalog/prices'
import { type Clock, iso } from '../../clock'
import { crashPoint } from '../../crash-points'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { OutboundContent } from '../../providers/messaging/port'
import { type MessagingPlatform, PlatformRefused, type SendRequest, type Sent } from '../../providers/messaging/port'
import { clashes, upstreamFailed } from '../../refusals'
import type { ContactService } from '../contacts/public'
import type { ConversationDoc, ConversationFeature } from '../conversations/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { TemplateService } from '../templates/public'
import type { Meter } from '../usage/public'
import type { BotConnections } from './bots'
import { checkReply, type ReplyBody, templateValues, WINDOW_MS } from './reply-rules'

export interface ReplyDeps {
  conversations: ConversationFeature['conversations']
  numbers: PhoneNumberService
  contacts: ContactService
  platform: MessagingPlatform
  /** The `botapp` platform (Telegram, or the sandbox) and its bots. */
  botPlatform: MessagingPlatform
  bots: BotConnections
  templates: TemplateService
  meter: Pick<Meter, 'charge'>
  clock: Clock
}

export class Replies {
  constructor(private readonly deps: ReplyDeps) {}

  async reply(workspace: WorkspaceDoc, conversationId: string, body: ReplyBody): Promise<{ ok: true }> {
    const d = this.deps
    const conversation = await d.conversations.get(workspace.id, conversationId)
    const checked = checkReply(body)
    const thread = typeof conversation.thread === 'string' ? conversation.thread.split(':') : null
    if ((conversation.channel !== 'chatapp' && conversation.channel !== 'botapp') || !thread)
      throw clashes(`conversation ${conversationId} is a ${conversation.channel} conversation; replies go to chat-app and bot-app conversations`)
    const [, ours, customer] = thread as [string, string, string]
    if (conversation.channel === 'botapp') return this.botReply(workspace, conversation, ours, customer, checked)
    const number = await threadNumber(d.numbers, workspace, ours)
    if (!number.externalAgents) throw clashes(`external agents are off for ${ours}: its agent answers this conversation`)
    if (conversation.status === 'handled') throw clashes('a teammate took this conversation over')
    let content: OutboundContent
    let category: string | null = null
    let shown: string | null = null
    if (checked.kind === 'template') {
      const template = await d.templates.forReply(workspace.id, ours, checked.template.name, checked.template.language)
      const values = templateValues(template, checked.template)
      category = template.category
      shown = template.body.replace(/\{\{\s*(\d+)\s*\}\}/g, (_, n: string) => values.variables[Number(n) - 1] ?? '')
      content = { type: 'template', template: { name: template.name, language: template.language, variables: values.variables } }
    } else if (checked.kind === 'form') {
      const form = await d.templates.formForReply(workspace.id, checked.name, number.agentId)
      content = { type: 'form', form: { name: form.name } }
    } else content = checked.content
    // Opt-outs stop every message except a utility or authentication template (transactional).
    const contact = await d.contacts.findByPhone(workspace.id, customer)
    if (contact?.optedOut && (category === null || category === 'marketing')) throw clashes(`${customer} opted out of messages`)
    if (checked.kind !== 'template') assertWindowOpen(conversation, d.clock.now(), 'send a template')
    await this.deliver(workspace, conversation, d.platform, { from: ours, to: customer, content }, shown, category)
    return { ok: true }
  }

  /** A Telegram chat: text and media only, no 24-hour window, no contact to have opted out. */
  private async botReply(workspace: WorkspaceDoc, conversation: ConversationDoc, botId: string, chat: string, checked: ReturnType<typeof checkReply>): Promise<{ ok: true }> {
    const bot = await threadBot(this.deps.bots, workspace, botId)
    if (!bot.externalAgents) throw clashes(`external agents are off for bot ${botId}: its agent answers this conversation`)
    if (conversation.status === 'handled') throw clashes('a teammate took this conversation over')
    if (checked.kind !== 'content') throw clashes(`the bot app has no ${checked.kind}s: send text or media`)
    await this.deliver(workspace, conversation, this.deps.botPlatform, { from: botId, to: chat, content: checked.content }, null, null)
    return { ok: true }
  }

  /** Sent, then stored with its delivery and charged; a refusal stores nothing (502). */
  private async deliver(workspace: WorkspaceDoc, conversation: ConversationDoc, platform: MessagingPlatform, request: SendRequest, shown: string | null, category: string | null): Promise<void> {
    const d = this.deps
    const now = d.clock.now()
    const sent = await sendOn(platform, request)
    const content = request.content
    // Stored with its delivery in one write: a crash never keeps a sent message without it.
    const { message } = await d.conversations.addMessage(conversation, {
      author: 'agent',
      parts: shown === null ? partsOf(content) : [{ type: 'text', text: shown }],
      extra: { external: true, sent: content, ...(category ? { category } : {}), delivery: { platformMessageId: sent.platformMessageId, status: firstStatus(platform), at: iso(now) } },
    })
    crashPoint('reply.stored')
    await chargeReply(d.meter, workspace, conversation, message.id, category, now)
  }
}

/** The chat-app number of a conversation, still this workspace's; 409 `number disconnected` else. */
export async function threadNumber(numbers: PhoneNumberService, workspace: WorkspaceDoc, ours: string) {
  const number = await numbers.numberIn(workspace.id, ours)
  if (!number) throw clashes(`number disconnected: ${ours} was released or is no longer this workspace's, so nothing can be sent on it`)
  return number
}

/** The bot of a bot-app conversation, still connected to this workspace; 409 else. */
export async function threadBot(bots: BotConnections, workspace: WorkspaceDoc, botId: string) {
  const bot = await bots.inWorkspace(workspace.id, botId)
  if (!bot) throw clashes(`bot ${botId} is no longer connected to this workspace`)
  return bot
}

/** 409 (with `windowClosedAt`) unless the customer wrote in the last 24 hours; `instead` says what still goes. */
export function assertWindowOpen(conversation: ConversationDoc, now: number, instead: string): void {
  const last = conversation.lastInboundAt ? Date.parse(conversation.lastInboundAt) : null
  if (last === null || now - last > WINDOW_MS) throw clashes(`the customer's 24-hour window is closed: ${instead}`, { windowClosedAt: last === null ? null : iso(last + WINDOW_MS) })
}

/** Sends on the platform; its refusal is a 502 naming why (nothing was sent). */
export async function sendOn(platform: MessagingPlatform, request: SendRequest): Promise<Sent> {
  try {
    return await platform.send(request)
  } catch (err) {
    if (err instanceof PlatformRefused) throw upstreamFailed(`the messaging platform refused the message: ${err.message}`, { code: err.code })
    throw err
  }
}

/** A message's status once the platform took it: Telegram has no later receipts, so it is `sent` at once. */
export const firstStatus = (platform: MessagingPlatform) => (platform.name === 'telegram' ? 'sent' : 'accepted')

/** One `reply_charge` per message sent on a platform: 10% of its rate for the category (a template's own, `service` for the rest). */
export async function chargeReply(meter: Pick<Meter, 'charge'>, workspace: WorkspaceDoc, conversation: ConversationDoc, messageId: string, category: string | null, now: number): Promise<void> {
  const charged: MessageCategory = category === 'marketing' || category === 'utility' || category === 'authentication' ? category : 'service'
  await meter.charge({
    id: `use_rc_${messageId}`,
    workspaceId: workspace.id,
    act: { kind: 'reply_charge', category: charged },
    refs: { conversationId: conversation.id, messageId },
    at: now,
  })
}

/** How a sent reply reads in the conversation (docs/spec.md message parts: text, or an image). */
function partsOf(content: OutboundContent): ({ type: 'text'; text: string } | { type: 'image'; url: string; alt: string | null })[] {
  if (content.type === 'text') return [{ type: 'text', text: content.text }]
  if (content.type === 'media')
    return content.media.type === 'image' ? [{ type: 'image', url: content.media.url, alt: content.media.caption ?? null }] : [{ type: 'text', text: `[${content.media.type}] ${content.media.url}` }]
  if (content.type === 'template') return [{ type: 'text', text: `[template ${content.template.name}]` }]
  return [{ type: 'text', text: `[form ${content.form.name}]` }]
}
