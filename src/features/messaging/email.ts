/**
 * The email channel on the messaging path: a customer's email (console `inbound` with
 * `channel: email`) opens or continues the conversation of that address and agent, and the agent
 * answers by email through the email transport (SMTP with `SMTP_URL`, else the embedded outbox,
 * `GET /console/outbox`). `to` names the agent (`ag_…`); without it, the workspace's only agent.
 * An email address is not a contact (contacts are phone numbers), so opt-out keywords by email
 * are not recorded; a teammate's takeover silences the agent as on every channel.
 */

import { SerialQueue } from '../../../actors/serial-queue'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { invalid } from '../../refusals'
import type { AgentService } from '../agents/public'
import type { ConversationFeature } from '../conversations/public'
import type { AgentAnswers } from './answers'
import type { Received } from './inbound'

/** RFC 5321 caps an address at 254 characters; the shape check is the usual local@domain.tld. */
const ADDRESS = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/

export class EmailInbound {
  private readonly threads = new SerialQueue()

  constructor(
    private readonly d: {
      agents: AgentService
      conversations: ConversationFeature['conversations']
      answers: AgentAnswers
    },
  ) {}

  async receive(workspace: WorkspaceDoc, input: { from: string; to: string | null; text: string }): Promise<Received> {
    const d = this.d
    const address = input.from.trim().toLowerCase()
    if (address.length > 254 || !ADDRESS.test(address)) throw invalid('from', `"${input.from}" is not an email address`)
    if (!input.text.trim()) throw invalid('text', 'must not be blank')
    const agent = await d.agents.addressed(workspace.id, input.to)
    const thread = `email:${agent.id}:${address}`
    return this.threads.run(thread, async () => {
      const conversation = await d.conversations.thread({ workspaceId: workspace.id, agentId: agent.id, channel: 'email', customer: { id: null, phone: null }, thread })
      // Owed in the message's commit unless a teammate took over (answers.ts).
      const target = { channel: 'email' as const, address }
      const answering = conversation.status !== 'handled'
      const also = answering ? d.answers.owe(conversation, agent.id, target) : undefined
      const recorded = await d.conversations.addMessage(conversation, { author: 'customer', parts: [{ type: 'text', text: input.text }], extra: { from: address }, also })
      if (answering) d.answers.start(workspace, agent.id, recorded, target)
      return { conversationId: conversation.id, messageId: recorded.message.id, receivedAt: recorded.message.createdAt }
    })
  }

  settled(): Promise<void> {
    return this.d.answers.settled()
  }
}
