/**
 * The v1 request context as one named plugin: bearer key → principal, `Service-Workspace` →
 * workspace, and the blanket rule that a `read` key only reads. It is a `derive`, so it runs
 * before body validation: an unauthenticated caller learns nothing about our schemas.
 */
import { Elysia } from 'elysia'
import type { Coordination } from '../coordination/port'
import { invalid, notAllowed } from '../refusals'
import { type Authenticator, type HttpPrincipal, type HttpWorkspace, type Scope, WORKSPACE_HEADER } from './authenticator'
import { bodyRefusal } from './body-check'
import { answerIdempotent, beginIdempotent, failIdempotent, holdClaim, type IdempotencyStep, releaseHold, requestKey } from './idempotency'

export type V1Context<P = HttpPrincipal, W = HttpWorkspace> = {
  principal: P
  workspace: W
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The blanket rule of every surface: a `read` key only reads (403 otherwise). */
export function assertMayWrite(principal: HttpPrincipal, method: string): void {
  if (principal.key.scope === 'read' && !READS.has(method)) {
    throw notAllowed('this key is read-only (scope read); use a build or full key')
  }
}

/** The request's bearer key as a principal, refused (401/403) when it may not make this request. */
export async function authenticateRequest<P extends HttpPrincipal<W>, W extends HttpWorkspace>(auth: Authenticator<P, W>, request: Request): Promise<P> {
  const principal = await auth.authenticate(request.headers.get('authorization'))
  assertMayWrite(principal, request.method)
  return principal
}

/**
 * Routes that manage customers run in the developer's own workspace, with a developer key
 * (docs/spec.md Authentication rule 4): a customer key is 403, the workspace header is 400.
 */
export function developerWorkspace<W extends HttpWorkspace>(principal: HttpPrincipal<W>, workspace: W): W {
  if (principal.home.kind === 'customer') throw notAllowed('a customer key cannot manage customers; use a key of the developer workspace')
  if (workspace.id !== principal.developer.id) {
    throw invalid('Service-Workspace', 'customer management runs in your own workspace; send it without this header')
  }
  return principal.developer
}

/**
 * The v1 context, plus the kernel rules a route declares instead of coding them:
 * - `scope: 'full' | 'build'` — the key's scope must reach it (403 naming what was refused);
 * - `developerOnly: true` — adds `developer` (the developer workspace) after refusing customer
 *   keys and the workspace header.
 * - `idempotent: true` (or `{ bodyKey }`) — `Idempotency-Key` claimed before the handler, its
 *   answer stored after it (or the key released on a 502/503/429/crash), a repeat replayed.
 */
export function v1Context<P extends HttpPrincipal<W>, W extends HttpWorkspace>(deps: { auth: Authenticator<P, W>; coordination: Coordination }) {
  // The claim a request holds on its Idempotency-Key, between its beforeHandle and its answer.
  const claims = new WeakMap<Request, Extract<IdempotencyStep, { kind: 'claimed' }>>()
  return (
    new Elysia({ name: 'v1-context' })
      // Not an async function: with the key and its workspace cached (every request but a key's
      // first) it answers a value, and no promise is made and awaited for it. Elysia compiles the
      // hook as one that may answer a promise (it reads the `return resolveContext(` below as such).
      .derive({ as: 'scoped' }, ({ request }): V1Context<P, W> | Promise<V1Context<P, W>> => {
        const { headers } = request
        const authenticated = deps.auth.authenticate(headers.get('authorization'))
        if (authenticated instanceof Promise) return resolveContext(deps.auth, request, authenticated)
        const resolved = deps.auth.resolve(authenticated, headers.get(WORKSPACE_HEADER))
        if (resolved instanceof Promise) return resolveContext(deps.auth, request, authenticated, resolved)
        return checkedContext(request, authenticated, resolved)
      })
      .macro({
        // The derive above runs before these (it is part of this plugin); its members are typed
        // possibly undefined inside a macro, hence the reads through derived().
        scope: (needed: Scope) => ({
          beforeHandle(ctx) {
            const { principal } = derived(ctx)
            requireScope(principal, needed, `${ctx.request.method} ${new URL(ctx.request.url).pathname}`)
          },
        }),
        developerOnly: {
          resolve(ctx) {
            const { principal, workspace } = derived(ctx)
            return { developer: developerWorkspace<W>(principal, workspace) }
          },
        },
        // docs/spec.md Conventions rule 6: `Idempotency-Key` (or the body member named by `bodyKey`; the
        // header wins), scoped to the workspace and the route, bound to the body without that member
        // (http/idempotency.ts).
        idempotent: (opts: true | { bodyKey: string }) => ({
          async beforeHandle(ctx) {
            const { workspace } = derived(ctx)
            const found = requestKey(ctx.request.headers.get('idempotency-key'), ctx.body, opts === true ? undefined : opts.bodyKey)
            const scope = `${workspace.id}:${ctx.request.method} ${ctx.route}`
            const step = await beginIdempotent(deps.coordination, scope, found.key, found.body, found.field)
            if (step.kind === 'claimed') {
              claims.set(ctx.request, step)
              // A throwing handler is settled by the error plugin (settleFailedClaim).
              holdClaim(ctx.request, (error) => failIdempotent(deps.coordination, step, error))
            }
            if (step.kind === 'replay') {
              ctx.set.status = step.status
              ctx.set.headers['idempotent-replayed'] = 'true'
              return step.body
            }
          },
          async afterHandle(ctx) {
            const claim = claims.get(ctx.request)
            if (!claim) return
            claims.delete(ctx.request)
            releaseHold(ctx.request)
            const status = typeof ctx.set.status === 'number' ? ctx.set.status : 200
            await answerIdempotent(deps.coordination, claim, { status, body: ctx.response })
          },
        }),
      })
  )
}

/** The v1 context when the key or its workspace had to be read from the store. */
async function resolveContext<P extends HttpPrincipal<W>, W extends HttpWorkspace>(
  auth: Authenticator<P, W>,
  request: Request,
  authenticated: P | Promise<P>,
  resolving?: W | Promise<W>,
): Promise<V1Context<P, W>> {
  const principal = await authenticated
  const workspace = await (resolving ?? auth.resolve(principal, request.headers.get(WORKSPACE_HEADER)))
  return checkedContext(request, principal, workspace)
}

/** The blanket rules every v1 request meets once its principal is known: scope, then a body refused earlier. */
function checkedContext<P extends HttpPrincipal, W>(request: Request, principal: P, workspace: W): V1Context<P, W> {
  assertMayWrite(principal, request.method)
  bodyRefusal(request)
  return { principal, workspace }
}

/** The derive's members, present whenever a macro of this plugin runs. */
function derived<P, W>(ctx: { principal?: P; workspace?: W }): V1Context<P, W> {
  const { principal, workspace } = ctx
  if (principal === undefined || workspace === undefined) throw new Error('v1 context: a macro ran before its derive')
  return { principal, workspace }
}

const RANK: Record<Scope, number> = { read: 0, build: 1, full: 2 }

/** Refuses with 403 unless the key's scope reaches `needed`; `action` says what was refused. */
export function requireScope(principal: HttpPrincipal, needed: Scope, action: string): void {
  if (RANK[principal.key.scope] < RANK[needed]) {
    throw notAllowed(`${action} needs a ${needed} key (this key's scope is ${principal.key.scope})`)
  }
}
