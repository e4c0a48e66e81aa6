/** Sending one email: the port webhook deliveries (and later notifications) use. */

export interface EmailAttachment {
  filename: string
  contentType: string
  content: string
}

export interface EmailMessage {
  to: string
  subject: string
  text: string
  headers?: Record<string, string>
  attachments?: EmailAttachment[]
  /** What the message is about, kept by the outbox (SMTP sends it in the headers). */
  eventId?: string
  /** The workspace it was sent for, so erasing a customer erases its outbox too. */
  workspaceId?: string
}

export interface EmailReceipt {
  /** The server's reply code for the message (250 when accepted). */
  code: number | null
  response: string
}

export class EmailFailedError extends Error {
  override readonly name = 'EmailFailedError'
  constructor(
    message: string,
    /** The SMTP reply code that refused it, when the server gave one. */
    readonly code: number | null,
  ) {
    super(message)
  }
}

export interface EmailSender {
  /** Resolves once the SMTP server accepted the message; EmailFailedError otherwise. */
  send(message: EmailMessage): Promise<EmailReceipt>
  close(): Promise<void>
}
