/**
 * GET /metrics: the Prometheus text, behind the console token (it names workspaces' volumes and
 * the service's load). Outside the API surfaces: no API key, no rate limit, not in the OpenAPI
 * documents (docs/production.md describes it).
 */
import { Elysia } from 'elysia'
import { checkConsoleToken } from '../http/console-auth'
import type { Metrics } from './metrics'

export function metricsRoute(metrics: Metrics, consoleToken: string) {
  return new Elysia({ name: 'metrics' }).get(
    '/metrics',
    async ({ request }) => {
      checkConsoleToken(consoleToken, request)
      return new Response(await metrics.scrape(), { headers: { 'content-type': metrics.contentType } })
    },
    { detail: { hide: true } },
  )
}
