/**
 * The messaging port: what the messaging feature asks of a chat platform (send text, media, a
 * template, an interactive form) and what the platform reports back (delivery receipts). Inbound
 * messages reach the feature from each adapter's webhook (or, for the sandbox, the console).
 * Adapters: `sandbox` (sandbox.ts, the default), the WhatsApp Cloud API (whatsapp.ts) and the
 * Telegram Bot API (telegram.ts).
 */
export type OutboundContent =
  | { type: 'text'; text: string }
  | { type: 'media'; media: { type: 'image' | 'video' | 'audio' | 'file'; url: string; caption?: string; filename?: string } }
  | { type: 'template'; template: { name: string; language: string; variables: string[] } }
  | { type: 'form'; form: { name: string } }

export interface SendRequest {
  /** Our number (the sender) and the customer's (E.164). */
  from: string
  to: string
  content: OutboundContent
  /**
   * Our id for the message, echoed in its receipts where the platform can (WhatsApp's
   * `biz_opaque_callback_data`): a message whose platform id a crash lost is still matched.
   */
  ref?: string
}

export interface Sent {
  /** The platform's id of the message (receipts refer to it). */
  platformMessageId: string
}

/** The platform would not take the message (docs/spec.md: 502 on the reply endpoint). */
export class PlatformRefused extends Error {
  override readonly name = 'PlatformRefused'
  constructor(
    message: string,
    readonly code: string | null = null,
  ) {
    super(message)
  }
}

export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed'

export interface Receipt {
  platformMessageId: string
  status: ReceiptStatus
  at: number
  error?: { code: string; message: string }
  /** The `ref` the message was sent with, when the platform echoes it. */
  ref?: string
}

export interface MessagingPlatform {
  readonly name: string
  send(request: SendRequest): Promise<Sent>
  onReceipt(listener: (receipt: Receipt) => Promise<void> | void): void
}
