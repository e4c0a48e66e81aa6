/**
 * The legacy request context: the same bearer keys as v1 (the key's own workspace; the legacy
 * surface has no Service-Workspace header), docs/spec.md's legacy rate limits with their headers on
 * every answer, and the read-only rule for `read` keys. Rate counting comes first and is keyed by
 * the presented credential, so even refused keys are counted (a brute-force brake) and 401s carry
 * the headers too.
 */
import { Elysia } from 'elysia'
import type { RateRule } from '../catalog/limits'
import type { Clock } from '../clock'
import type { Coordination } from '../coordination/port'
import { type Authenticator, type HttpPrincipal, type HttpWorkspace, hashKey } from './authenticator'
import { bodyRefusal } from './body-check'
import { authenticateRequest } from './context'
import { countRequest, LEGACY_RATES } from './rate-limit'

export type LegacyContext<P = HttpPrincipal, W = HttpWorkspace> = {
  principal: P
  workspace: W
}

function subjectOf(request: Request, server: { requestIP?(r: Request): { address: string } | null } | null): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
  if (match) return hashKey(match[1]).slice(0, 32)
  return `ip:${server?.requestIP?.(request)?.address ?? 'unknown'}`
}

/**
 * `server`: the listening server (the client's address), read from here rather than from the hook's
 * context: a hook that reads `server` there makes Elysia define it on every request of every route.
 */
export function legacyContext<P extends HttpPrincipal<W>, W extends HttpWorkspace>(deps: {
  auth: Authenticator<P, W>
  coordination: Coordination
  clock: Clock
  server: () => Bun.Server<unknown> | null
  rule?: RateRule
  name?: string
}) {
  const rule = deps.rule ?? LEGACY_RATES.api
  return new Elysia({ name: deps.name ?? `legacy-context:${rule.name}` }).derive({ as: 'scoped' }, async ({ request, set }): Promise<LegacyContext<P, W>> => {
    await countRequest(deps.coordination, rule, subjectOf(request, deps.server()), deps.clock.now(), set.headers as Record<string, unknown>)
    const principal = await authenticateRequest(deps.auth, request)
    bodyRefusal(request)
    return { principal, workspace: principal.home }
  })
}
