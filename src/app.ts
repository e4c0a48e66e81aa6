/**
 * The Elysia composition: kernel plugins (errors, request log), the v1 surface under /api/v1,
 * the console under /console, the legacy surface at the root, and one OpenAPI 3.1 document
 * per surface with a browsable page.
 */
import { type AnyElysia, Elysia } from 'elysia'
import { tenancyFeature } from './features/workspaces'
import { AuthThrottle, authThrottleGate } from './http/auth-throttle'
import { BodySchemas, type RouteRow } from './http/body-check'
import { BodyDeadlines } from './http/body-deadline'
import { bodyLimitOf, isVendorCallback } from './http/body-limits'
import { checkConsoleToken } from './http/console-auth'
import { authenticateRequest } from './http/context'
import { drainingGate } from './http/draining-gate'
import { errorPlugin } from './http/error-plugin'
import { jsonBodies } from './http/json-body'
import { mountDocs } from './http/openapi-docs'
import { readiness } from './http/readiness'
import { requestLog } from './http/request-log'
import { type CredentialCheck, isVisitorPath, pathOf, V1_PREFIX } from './http/surface'
import { metricsRoute } from './metrics'
import type { Services } from './services'
import { MAX_MESSAGE_BYTES, MEDIA_PREFIX } from './voice/public'
export const DOCS = { v1: `${V1_PREFIX}/docs`, legacy: '/docs', console: '/console/docs' } as const

/** One surface: every feature's plugins for it, in feature order. */
function surface(services: Services, which: 'v1' | 'console' | 'legacy' | 'ws' | 'callbacks', options: { prefix?: string }): AnyElysia {
  const app: AnyElysia = new Elysia({ ...options, normalize: false })
  for (const { parts } of services.features) for (const plugin of parts[which] ?? []) app.use(plugin)
  return app
}

export function createApp(services: Services, consoleToken: string) {
  const { auth } = services.of(tenancyFeature)
  const v1 = surface(services, 'v1', { prefix: V1_PREFIX })
  const consoleSurface = surface(services, 'console', { prefix: '/console' })
  // The legacy surface at the root: the key's own workspace, docs/spec.md's legacy rate limits.
  const legacy = surface(services, 'legacy', {})
  const sockets = surface(services, 'ws', {})
  const callbacks = surface(services, 'callbacks', {})

  // Each document keeps its own surface's routes and none of the documentation routes.
  const notV1 = [/^(?!\/api\/v1\/)/, /^\/api\/v1\/docs/]
  const notConsole = [/^(?!\/console\/)/, /^\/console\/docs/]
  const notLegacy = [/^\/api\/v1(\/|$)/, /^\/console(\/|$)/, /^\/docs/]

  // WebSocket messages over the media protocol's ceiling are refused by Bun itself (close 1009).
  const checkCredentials: CredentialCheck = async (request, surface) => {
    const path = new URL(request.url).pathname
    if (surface === 'console') checkConsoleToken(consoleToken, request)
    else if (isVisitorPath(path) || path.startsWith(MEDIA_PREFIX) || isVendorCallback(path)) return false
    else await authenticateRequest(auth, request)
    return true
  }
  // Read on the first body, when every surface is mounted.
  let routes: () => RouteRow[] = () => []
  const bodySchemas = new BodySchemas(() => routes())
  const authThrottle = new AuthThrottle(services.coordination, services.config.authFailuresPerMinute)
  // The listening server, once there is one (hooks read it from here rather than from their context).
  let server: () => Bun.Server<unknown> | null | undefined = () => null
  const clientOf = (request: Request) => server()?.requestIP(request)?.address ?? 'unknown'
  const bodyDeadlines = new BodyDeadlines({ onTimeout: (client, slowBodies, reason) => services.logger.warn({ client, slowBodies, reason }, 'request body too slow: answered 408') })
  const app = new Elysia({ normalize: false, websocket: { maxPayloadLength: MAX_MESSAGE_BYTES } })
    .use(errorPlugin(services.logger, checkCredentials, { brake: authThrottle, clientOf }, (request) => bodyLimitOf(pathOf(request))))
    .use(requestLog(services.logger))
    .use(authThrottleGate(authThrottle, clientOf))
    .use(jsonBodies({ deadlines: bodyDeadlines, checkCredentials, schemas: bodySchemas, idleSeconds: services.config.httpIdleSeconds, server: () => server() }))
    .use(drainingGate(services.draining))
    .use(readiness(services))
    .use(metricsRoute(services.metrics, consoleToken))
    .use(v1)
    .use(consoleSurface)
    .use(legacy)
    .use(sockets)
    .use(callbacks)
  routes = () => app.routes
  server = () => app.server
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
