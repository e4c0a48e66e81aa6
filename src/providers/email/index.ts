/** Picks the email sender from config: SMTP when SMTP_URL is set, none otherwise. */
import type { EmailSender } from './port'
import { SmtpEmailSender } from './smtp'

export type { EmailMessage, EmailReceipt, EmailSender } from './port'
export { EmailFailedError } from './port'

export function createEmailSender(config: { smtpUrl?: string; smtpFrom: string }, timeoutMs: number): EmailSender | null {
  return config.smtpUrl ? new SmtpEmailSender({ url: config.smtpUrl, from: config.smtpFrom, timeoutMs }) : null
}
