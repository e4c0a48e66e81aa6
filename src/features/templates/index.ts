/** Templates and forms: what a chat-app reply may send besides text and media (docs/spec.md Template). */

import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { notificationsRef } from '../notifications/public'
import { phoneNumbersRef } from '../phone-numbers/public'
import { templatesRef } from './public'
import { formsSpec, openForms, openTemplates, templatesSpec } from './repository'
import { TemplateReview } from './review'
import { templatesConsole, templatesV1 } from './routes'
import { TemplateService } from './service'

export const templatesFeature = defineFeature(templatesRef, {
  async build(kernel, use) {
    const { agents } = use(agentsRef)
    const { numbers } = use(phoneNumbersRef)
    const { notifications } = use(notificationsRef)
    const repo = await openTemplates(kernel.store)
    const templates = new TemplateService(repo, await openForms(kernel.store), kernel.clock, {
      agentExists: (workspaceId, id) => agents.exists(workspaceId, id),
      number: (workspaceId, number) => numbers.numberIn(workspaceId, number),
    })
    const review = new TemplateReview(repo, notifications, kernel.clock)
    kernel.customerHooks.onErased(eraseCollections(kernel.store, [templatesSpec, formsSpec]), 'templates and forms erased')
    return {
      services: { templates },
      console: [templatesConsole({ auth: kernel.http.console, templates, review })],
      v1: [templatesV1({ context: kernel.http.v1, templates })],
    }
  },
})
