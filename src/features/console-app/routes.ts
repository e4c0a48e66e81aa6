/**
 * The console app's own routes. Its page and files carry no secret and need no token (the page
 * asks for one); the live stream takes a ticket (tickets.ts) that the page buys with the token.
 * - GET /console/app: the page; GET /console/app/v/{version}/{file}: its modules, styles and libraries.
 * - POST /console/app/tickets (console token): `{ workspace }` → 201 `{ ticket, expiresAt, stream }`.
 * - GET /console/app/charts/{name} (console token): a state machine as a graph (graph.ts).
 * - GET /console/app/stream?ticket=…: the workspace's live events (live.ts); 401 without a good ticket.
 */
import { Elysia, t } from 'elysia'
import { iso } from '../../clock'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { notThere } from '../../refusals'
import type { AppAssets } from './assets'
import { chartGraph, isMachineName } from './graph'
import type { LiveHub } from './live'
import type { StreamTickets } from './tickets'

const notHere = () => new Response('not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } })

/** The page and its files: no token (they are the same for everyone). */
export function appPages(assets: AppAssets) {
  return new Elysia({ detail: { hide: true } })
    .get('/app', ({ request }) => assets.index(request))
    .get('/app/', ({ request }) => assets.index(request))
    .get('/app/v/:version/*', ({ params, request }) => {
      if (params.version !== assets.version) return notHere()
      return assets.file(params['*'], request) ?? notHere()
    })
}

/** The live stream: a ticket in the query, never the token. `server`: the listening server (kernel.listening). */
export function appStream(deps: { tickets: StreamTickets; hub: LiveHub; server: () => Bun.Server<unknown> | null }) {
  return new Elysia({ detail: { tags: ['Console'] } }).get(
    '/app/stream',
    async ({ query, request }) => {
      const { workspaceId } = await deps.tickets.redeem(query.ticket)
      // The stream outlives Bun's idle timeout (10 s) between events.
      deps.server()?.timeout(request, 0)
      return deps.hub.stream(workspaceId)
    },
    {
      query: t.Object({ ticket: t.Optional(t.String({ description: 'from POST /console/app/tickets; good once, for 30 s' })) }),
      detail: {
        summary: "The console app's live events for one workspace (Server-Sent Events: ready, call, pipeline, actor)",
        responses: answers({ 200: t.String({ description: 'text/event-stream' }), ...consoleErrors() }),
      },
    },
  )
}

/** The app's own reads under the console token: stream tickets, and the state charts as graphs. */
export function appApi(deps: { auth: KernelHttp['console']; tickets: StreamTickets; exists: (workspaceId: string) => Promise<boolean> }) {
  const Node = t.Object({
    id: t.String(),
    label: t.String(),
    parent: t.Union([t.String(), t.Null()]),
    type: t.String(),
    initial: t.Boolean(),
    description: t.Union([t.String(), t.Null()]),
    internal: t.Array(t.String()),
  })
  const Edge = t.Object({ id: t.String(), source: t.String(), target: t.String(), label: t.String(), kind: t.String() })
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(deps.auth)
    .get(
      '/app/charts/:name',
      ({ params }) => {
        if (!isMachineName(params.name)) throw notThere(`no machine ${params.name}; see GET /console/machines`)
        return chartGraph(params.name)
      },
      {
        params: t.Object({ name: t.String() }),
        detail: {
          summary: 'A state machine as a graph to draw: states (nested in their parent) and labelled transitions, eventless and delayed ones included',
          responses: answers({ 200: t.Object({ name: t.String(), id: t.String(), version: t.Integer(), nodes: t.Array(Node), edges: t.Array(Edge) }), ...consoleErrors(404) }),
        },
      },
    )
    .post(
      '/app/tickets',
      async ({ body, set }) => {
        if (!(await deps.exists(body.workspace))) throw notThere(`workspace ${body.workspace} not found`)
        const { ticket, expiresAt } = deps.tickets.issue(body.workspace)
        set.status = 201
        return { ticket, expiresAt: iso(expiresAt), stream: `/console/app/stream?ticket=${encodeURIComponent(ticket)}` }
      },
      {
        body: t.Object({ workspace: t.String({ minLength: 1, maxLength: 80, description: 'the workspace whose live events the stream carries (ws_… or org_…)' }) }, { additionalProperties: false }),
        detail: {
          summary: 'A ticket for one live stream of a workspace: good once, for 30 seconds (the console token never goes in a URL)',
          responses: answers({ 201: t.Object({ ticket: t.String(), expiresAt: t.String(), stream: t.String() }), ...consoleErrors(400, 404) }),
        },
      },
    )
}
