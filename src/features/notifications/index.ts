/** What other features may use of notifications (its only public surface). */

// Re-exported for other features (they import from this index, never from inner files).
export { notificationsConsole } from './console'
export { openNotifications } from './repository'
export { NotificationService } from './service'
