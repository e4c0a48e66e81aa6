/**
 * The SMTP adapter (nodemailer): `SMTP_URL` = `smtp://user:pass@host:port` (or `smtps://` for
 * TLS from the first byte), messages from `SMTP_FROM`. One pooled transport per process.
 */
import nodemailer, { type Transporter } from 'nodemailer'
import { EmailFailedError, type EmailMessage, type EmailReceipt, type EmailSender } from './port'

// nodemailer's default pool size: a few connections keep up with webhook volume without looking
// like a flood to the relay.
const MAX_CONNECTIONS = 5

export interface SmtpOptions {
  url: string
  from: string
  /** Connect, greeting and idle-socket limits (ms): a dead relay fails an attempt instead of hanging it. */
  timeoutMs: number
}

export class SmtpEmailSender implements EmailSender {
  private readonly transport: Transporter

  constructor(private readonly options: SmtpOptions) {
    this.transport = nodemailer.createTransport(options.url, {
      pool: true,
      maxConnections: MAX_CONNECTIONS,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    } as object)
  }

  async send(message: EmailMessage): Promise<EmailReceipt> {
    try {
      const info = await this.transport.sendMail({
        from: this.options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        headers: message.headers,
        attachments: message.attachments?.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
      })
      const response = String(info.response ?? '')
      if (Array.isArray(info.rejected) && info.rejected.length > 0) throw new EmailFailedError(`the mail server refused ${message.to}: ${response}`, codeOf(response))
      return { code: codeOf(response), response }
    } catch (err) {
      if (err instanceof EmailFailedError) throw err
      const e = err as { message?: string; responseCode?: number }
      throw new EmailFailedError(`email to ${message.to} not sent: ${e.message ?? String(err)}`, typeof e.responseCode === 'number' ? e.responseCode : null)
    }
  }

  async close(): Promise<void> {
    this.transport.close()
  }
}

const codeOf = (response: string): number | null => {
  const m = /^(\d{3})\b/.exec(response)
  return m ? Number(m[1]) : null
}
