/**
 * The Elysia composition: kernel plugins (errors, request log), the v1 surface under /api/v1,
 * the console under /console, the legacy surface at the root, and one OpenAPI 3.1 document
 * per surface with a browsable page.
 */
import { Elysia } from 'elysia'
import type { Services } from './services'
import { errorPlugin } from './http/error-plugin'
import { requestLog } from './http/request-log'
import { authenticateRequest, v1Context } from './http/context'
import { checkConsoleToken, consoleAuth } from './http/console-auth'
import { legacyContext } from './http/legacy-context'
import { V1_PREFIX } from './http/surface'
import { mountDocs } from './http/openapi-docs'
import { jsonBodies } from './http/json-body'
import { customersV1 } from './features/customers/v1'
import { agentsV1 } from './features/agents/v1'
import { modelsV1 } from './features/models/v1'
import { voicesV1 } from './features/voices/v1'
import { phoneNumbersV1 } from './features/phone-numbers/v1'
import { knowledgeV1 } from './features/knowledge/v1'
import { conversationsV1 } from './features/conversations/v1'
import { testChatV1 } from './features/conversations/test-chat-v1'
import { analyticsV1 } from './features/analytics/v1'
import { workspacesConsole } from './features/workspaces/console'
import { contactsConsole } from './features/contacts/console'
import { phoneNumbersConsole } from './features/phone-numbers/console'
import { clockConsole } from './features/clock/console'
import { inspectionConsole } from './features/inspection/console'
import { conversationsConsole } from './features/conversations/console'
import { versionsLegacy } from './features/versions/legacy'
import { webhooksV1 } from './features/webhooks/v1'
import { webhooksLegacy } from './features/webhooks/legacy'
import { notificationsConsole } from './features/notifications/console'
import { outboxConsole } from './features/outbox/console'

export const DOCS = { v1: `${V1_PREFIX}/docs`, legacy: '/docs', console: '/console/docs' } as const

export function createApp(services: Services, consoleToken: string) {
  const context = v1Context({ keys: services.keys, resolver: services.resolver })
  const auth = consoleAuth(consoleToken)

  const v1 = new Elysia({ prefix: V1_PREFIX, normalize: false })
    .use(customersV1({ context, customers: services.customers, keys: services.keys, coordination: services.coordination, lifecycle: services.customerLifecycle }))
    .use(agentsV1({ context, agents: services.agents }))
    .use(knowledgeV1({ context, agents: services.agents, knowledge: services.knowledge }))
    .use(testChatV1({ context, testChat: services.testChat }))
    .use(analyticsV1({ context, agents: services.agents, analytics: services.analytics }))
    .use(conversationsV1({ context, conversations: services.conversations, coordination: services.coordination, clock: services.clock }))
    .use(modelsV1({ context }))
    .use(voicesV1({ context }))
    .use(phoneNumbersV1({ context, numbers: services.numbers }))
    .use(webhooksV1({ context, webhooks: services.webhooks }))

  const consoleSurface = new Elysia({ prefix: '/console', normalize: false })
    .use(workspacesConsole({ auth, workspaces: services.workspaces, keys: services.keys }))
    .use(contactsConsole({ auth, workspaces: services.workspaces, contacts: services.contacts }))
    .use(phoneNumbersConsole({ auth, workspaces: services.workspaces, numbers: services.numbers }))
    .use(clockConsole({ auth, control: services.clockControl }))
    .use(inspectionConsole({ auth, runtime: services.runtime }))
    .use(conversationsConsole({ auth, workspaces: services.workspaces, conversations: services.conversations }))
    .use(notificationsConsole({ auth, workspaces: services.workspaces, notifications: services.notifications }))
    .use(outboxConsole({ auth, outbox: services.outbox }))

  // The legacy surface at the root: the key's own workspace, SPEC.md's legacy rate limits.
  const legacyApi = legacyContext({ keys: services.keys, coordination: services.coordination, clock: services.clock })
  const legacy = new Elysia({ normalize: false })
    .use(versionsLegacy({ context: legacyApi, versions: services.versions }))
    .use(webhooksLegacy({ context: legacyApi, webhooks: services.legacyWebhooks }))

  // Each document keeps its own surface's routes and none of the documentation routes.
  const notV1 = [/^(?!\/api\/v1\/)/, /^\/api\/v1\/docs/]
  const notConsole = [/^(?!\/console\/)/, /^\/console\/docs/]
  const notLegacy = [/^\/api\/v1(\/|$)/, /^\/console(\/|$)/, /^\/docs/]

  const app = new Elysia({ normalize: false })
    .use(
      errorPlugin(services.logger, async (request, surface) => {
        if (surface === 'console') checkConsoleToken(consoleToken, request)
        else await authenticateRequest(services.keys, request)
      }),
    )
    .use(requestLog(services.logger))
    .use(jsonBodies())
    .get('/health', () => ({ ok: true }), { detail: { hide: true } })
    .use(v1)
    .use(consoleSurface)
    .use(legacy)
  mountDocs(app, {
    path: DOCS.v1,
    title: 'Agent platform API (v1)',
    version: '1.0.0',
    description: 'Agents, customers, calls, conversations, webhooks and usage. Every route needs `Authorization: Bearer <key>`; `Service-Workspace` selects a customer.',
    exclude: notV1,
    workspaceHeader: true,
  })
  mountDocs(app, {
    path: DOCS.legacy,
    title: 'Agent platform API (legacy)',
    version: '1.0.0',
    description: 'The legacy surface: webhook endpoints and deliveries, agent versions.',
    exclude: notLegacy,
  })
  mountDocs(app, { path: DOCS.console, title: 'Agent platform console', version: '1.0.0', description: 'Operator console; `Authorization: Bearer $CONSOLE_TOKEN`.', exclude: notConsole })
  return app
}

export type App = ReturnType<typeof createApp>
