/** Picks the email sender from config: SMTP when SMTP_URL is set, else the embedded outbox. */
import type { Clock } from '../../clock'
import { OutboxEmailSender, type OutboxRepo } from './outbox'
import type { EmailSender } from './port'
import { SmtpEmailSender } from './smtp'

export { type OutboxEmailDoc, type OutboxRepo, openOutbox } from './outbox'
export type { EmailMessage, EmailReceipt, EmailSender } from './port'
export { EmailFailedError } from './port'

export function createEmailSender(config: { smtpUrl?: string; smtpFrom: string }, timeoutMs: number, outbox: { repo: OutboxRepo; clock: Clock }): EmailSender {
  return config.smtpUrl ? new SmtpEmailSender({ url: config.smtpUrl, from: config.smtpFrom, timeoutMs }) : new OutboxEmailSender(outbox.repo, outbox.clock)
}
