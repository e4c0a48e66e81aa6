/** What other features may use of webhooks: its ref (for `use`), types and helpers; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { OutboxRepo } from '../../providers/email'
import type { LegacyWebhookService } from './legacy-service'
import type { WebhookService } from './service'

export interface WebhooksServices {
  webhooks: WebhookService
  legacyWebhooks: LegacyWebhookService
  /** Emails kept when no SMTP_URL is set (GET /console/outbox); the email channel's answers go there too. */
  outbox: OutboxRepo
}

export const webhooksRef = featureRef<WebhooksServices>('webhooks')

export { subscribes } from './repository'
export type { WebhookService } from './service'
