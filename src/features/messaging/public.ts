/** What other features may use of messaging: its ref (for `use`) and types; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { MessagingPlatform } from '../../providers/messaging/port'
import type { SandboxPlatform } from '../../providers/messaging/sandbox'
import type { BotInbound } from './botapp'
import type { BotConnections } from './bots'
import type { WebInboundSlot } from './console'
import type { EmailInbound } from './email'
import type { ReceivedFiles } from './files'
import type { InboundMessages } from './inbound'
import type { Replies } from './reply'
import type { SmtpListener } from './smtp-listener'
import type { MessagingTotals } from './summary'
import type { TeammateMessages } from './teammate'

export interface MessagingServices {
  inbound: InboundMessages
  /** The chat app: WhatsApp when configured, else the sandbox platform. */
  platform: MessagingPlatform
  /** The website channel's inbound and teammate messages (the web feature fills it). */
  web: WebInboundSlot
  sandbox: SandboxPlatform
  replies: Replies
  /** A teammate's message from the console, on any chat channel. */
  teammates: TeammateMessages
  files: ReceivedFiles
  emailInbound: EmailInbound
  bots: BotConnections
  botInbound: BotInbound
  /** Inbound mail over SMTP; null unless SMTP_LISTEN_PORT is set. */
  smtp: SmtpListener | null
  totals: MessagingTotals
}

export const messagingRef = featureRef<MessagingServices>('messaging')

export { WINDOW_MS } from './reply-rules'
export type { SentMessage } from './summary'
