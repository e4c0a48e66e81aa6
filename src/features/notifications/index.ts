/**
 * Notifications (docs/spec.md Events rule 8): what the service tells a developer about its own
 * workspace and its customers', stored and read in the console. One service for every feature
 * that notifies (usage, BYOK, webhooks, templates, campaigns): they `use` it, and it comes right
 * after tenancy in the feature list for that reason.
 */
import { defineFeature } from '../../kernel/feature'
import { tenancyRef } from '../workspaces/public'
import { notificationsConsole } from './console'
import { notificationsRef } from './public'
import { openNotifications } from './repository'
import { NotificationService } from './service'

export const notificationsFeature = defineFeature(notificationsRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const notifications = new NotificationService(await openNotifications(kernel.store), (id) => workspaceRepo.get(id), kernel.clock)
    return { services: { notifications }, console: [notificationsConsole({ auth: kernel.http.console, notifications })] }
  },
})
