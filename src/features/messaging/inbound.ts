/**
 * An inbound chat message: it finds or opens the conversation for that customer
 * and number, creates the contact if the person is new, records the message (which opens the
 * customer's 24-hour window: `lastInboundAt`), and then:
 * - "STOP"-style text records the opt-out and nothing is sent back;
 * - external agents on for the number: `message.received` goes out and the developer answers;
 * - a teammate took the conversation over: the agent stays quiet;
 * - else the number's agent answers through the conversation engine, on the platform.
 * The 201 answers once the message is stored; the agent's answer follows in the background.
 * Messages of one thread are handled one after another (in this process).
 */
import { SerialQueue } from '../../../actors/serial-queue'
import type { DomainEvent } from '../../events/bus'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import { clashes, invalid, notThere } from '../../refusals'
import type { AgentDoc } from '../agents/public'
import { type ContactService, normalizePhone } from '../contacts/public'
import type { ConversationFeature } from '../conversations/public'
import { type MessageDoc, type MessagePart, presentMessage } from '../conversations/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { AgentAnswers } from './answers'
import { isOptOut } from './opt-out'

/** What the customer sent as message parts: the media (if any), then its text or caption. */
export function partsOf(input: Pick<InboundInput, 'text' | 'media'>): MessagePart[] {
  const m = input.media
  const media: MessagePart[] = !m ? [] : m.type === 'image' ? [{ type: 'image', url: m.ref, alt: m.caption }] : [{ type: m.type, url: m.ref, name: m.name }]
  const text = input.text.trim() && !(m?.type === 'image' && m.caption === input.text) ? [{ type: 'text' as const, text: input.text }] : []
  return [...media, ...text]
}

export interface InboundInput {
  channel: 'chatapp'
  from: string
  /** Our number; the workspace's only chat-app number when absent. */
  to?: string | null
  text: string
  /** A photo, voice note, video or document, already kept (ReceivedFiles): its `file:` reference. */
  media?: { ref: string; type: 'image' | 'video' | 'audio' | 'file'; caption: string | null; name: string | null } | null
}

export interface Received {
  conversationId: string
  messageId: string
  receivedAt: string
}

export const receivedOf = (message: MessageDoc): Received => ({ conversationId: message.conversationId, messageId: message.id, receivedAt: message.createdAt })

export interface InboundDeps {
  numbers: PhoneNumberService
  contacts: ContactService
  conversations: ConversationFeature['conversations']
  answers: AgentAnswers
  logger: Logger
}

export class InboundMessages {
  private readonly threads = new SerialQueue()
  private readonly listeners: ((workspaceId: string, phone: string) => Promise<void>)[] = []

  /** Told of every customer message stored (sequences stop on a reply). */
  onCustomerMessage(listener: (workspaceId: string, phone: string) => Promise<void>): void {
    this.listeners.push(listener)
  }
  /** Agent answers still running (tests and shutdown wait for them). */

  constructor(private readonly deps: InboundDeps) {}

  async receive(workspace: WorkspaceDoc, input: InboundInput): Promise<Received> {
    const d = this.deps
    const phone = normalizePhone(input.from)
    if (!phone) throw invalid('from', `"${input.from}" is not a phone number`)
    if (!input.text.trim() && !input.media) throw invalid('text', 'must not be blank')
    const number = await this.ourNumber(workspace, input.to ?? null)
    if (!number.agentId) throw clashes(`${number.number} has no agent to answer it`)
    const agentId = number.agentId
    const thread = `chatapp:${number.number}:${phone}`
    return this.threads.run(thread, async () => {
      const contact = (await d.contacts.findByPhone(workspace.id, phone)) ?? (await d.contacts.create(workspace.id, { phone }))
      const conversation = await d.conversations.thread({ workspaceId: workspace.id, agentId, channel: 'chatapp', customer: { id: contact.id, phone }, thread })
      const optOut = isOptOut(input.text)
      // For external agents the message and its `message.received` commit together (an opt-out sends none).
      const event =
        number.externalAgents && !optOut
          ? (message: MessageDoc): DomainEvent => ({
              type: 'message.received',
              workspaceId: workspace.id,
              agentId,
              data: {
                ...receivedOf(message),
                channel: 'chatapp',
                customer: { id: contact.id, phone },
                parts: presentMessage(message, d.conversations.mediaLink ?? undefined).parts as Record<string, unknown>[],
              },
            })
          : undefined
      // The agent answers unless the customer opted out, the developer answers (external agents) or a
      // teammate took over; the answer is owed in the message's own commit, so a crash cannot lose it.
      const target = { channel: 'chatapp' as const, from: number.number, to: phone }
      const answering = !optOut && !number.externalAgents && conversation.status !== 'handled'
      const also = answering ? d.answers.owe(conversation, agentId, target) : undefined
      const recorded = await d.conversations.addMessage(conversation, { author: 'customer', parts: partsOf(input), also }, event)
      const received = receivedOf(recorded.message)
      if (answering) d.answers.start(workspace, agentId, recorded, target)
      for (const listener of this.listeners) await listener(workspace.id, phone).catch((err) => d.logger.warn({ err }, 'a listener of inbound messages failed'))
      if (optOut && !contact.optedOut) await d.contacts.patch(workspace.id, contact.id, { optedOut: true })
      return received
    })
  }

  /**
   * A simulations run's chat-app customer (docs/api/simulations.md): `text` from `phone` to `agent`
   * as the run targets it (the draft or a version), recorded and answered as a customer's message
   * is — one conversation per customer thread, one message after another, an opt-out keyword said
   * alone left unanswered — minus what would reach outside a test: no contact is created or marked
   * opted out, no number is needed, the conversation is a test one marked simulated (not billed,
   * out of analytics), and the reply is stored but handed to no platform.
   */
  async simulated(workspace: WorkspaceDoc, agent: AgentDoc, customer: { key: string; phone: string }, text: string): Promise<{ conversationId: string; reply: string }> {
    const d = this.deps
    if (!text.trim()) throw invalid('text', 'must not be blank')
    const thread = `chatapp:simulation:${customer.key}`
    return this.threads.run(thread, async () => {
      const conversation = await d.conversations.thread({
        workspaceId: workspace.id,
        agentId: agent.id,
        channel: 'chatapp',
        customer: { id: null, phone: customer.phone },
        thread,
        test: true,
        simulated: true,
      })
      const recorded = await d.conversations.addMessage(conversation, { author: 'customer', parts: [{ type: 'text', text }] })
      const reply = isOptOut(text) ? '' : await d.answers.simulated(workspace, agent, recorded)
      return { conversationId: conversation.id, reply }
    })
  }

  /** Resolves once every agent answer under way has been sent (or has failed). */
  settled(): Promise<void> {
    return this.deps.answers.settled()
  }

  private async ourNumber(workspace: WorkspaceDoc, to: string | null) {
    const d = this.deps
    if (to !== null) {
      const normal = normalizePhone(to)
      if (!normal) throw invalid('to', `"${to}" is not a phone number`)
      const number = await d.numbers.numberIn(workspace.id, normal)
      if (!number) throw notThere(`${normal} is not a number of this workspace`)
      if (number.channel !== 'chatapp') throw invalid('to', `${normal} is a voice number, not a chat-app number`)
      return number
    }
    const mine = (await d.numbers.list(workspace.id)).filter((n) => n.channel === 'chatapp')
    if (mine.length !== 1) throw invalid('to', mine.length ? 'the workspace has several chat-app numbers: say which one' : 'the workspace has no chat-app number')
    return mine[0]!
  }
}
