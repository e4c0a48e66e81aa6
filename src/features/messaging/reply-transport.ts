/**
 * How an agent's answer reaches the customer, by where the conversation lives (answers.ts keeps the
 * target with the owed answer, so any instance can send it): the chat app's platform (`accepted`
 * until its receipts), a bot on the bot app (Telegram has no receipts: `sent`), or email (`sent`
 * once SMTP or the outbox took it).
 */
import type { EmailSender } from '../../providers/email'
import type { MessagingPlatform } from '../../providers/messaging/port'
import type { SendReply } from './answers'

export function replyTransport(d: { platform: MessagingPlatform; botPlatform: MessagingPlatform; email: EmailSender }): SendReply {
  return async (target, reply, agentName, workspaceId) => {
    const text = reply.text
    if (target.channel === 'chatapp') {
      const sent = await d.platform.send({ from: target.from, to: target.to, content: { type: 'text', text }, ref: reply.id })
      return { platformMessageId: sent.platformMessageId, status: 'accepted' }
    }
    if (target.channel === 'botapp') {
      const sent = await d.botPlatform.send({ from: target.bot, to: target.chat, content: { type: 'text', text } })
      return { platformMessageId: sent.platformMessageId, status: 'sent' }
    }
    await d.email.send({ to: target.address, subject: `Re: your message to ${agentName}`, text, workspaceId })
    return { status: 'sent' }
  }
}
