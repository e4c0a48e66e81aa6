/** What other features may use of notifications: its ref (for `use`) and types; never its build (index.ts). */
import { featureRef } from '../../kernel/feature'
import type { NotificationService } from './service'

export interface NotificationsServices {
  notifications: NotificationService
}

export const notificationsRef = featureRef<NotificationsServices>('notifications')

export type { NotificationService, NotifyInput } from './service'
