/**
 * The console app's agents page: the workspace's agents with what an operator scans for (the
 * published version, the numbers that reach each one, calls today, the last change), one agent as
 * GET /api/v1/agents/{id} answers it, and an edit of its draft. The edit is the agents service's
 * own PATCH (the same rules, the same 400 naming the member), under the console token.
 */
import { Elysia, t } from 'elysia'
import type { Clock } from '../../clock'
import { answers, consoleErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import { addDays, localTime, startOfLocalDay } from '../../zoned-time'
import { Agent, type AgentService, PatchAgent } from '../agents/public'
import type { CallReads } from '../calls/public'
import { KnowledgeDocumentResponse, type KnowledgeService, toDocumentResponse } from '../knowledge/public'
import type { PhoneNumberService } from '../phone-numbers/public'
import type { VersionService } from '../versions/public'

/** An agents page lists up to this many (the campaign form's agent list read the same 100). */
const AGENTS_MAX = 100
/** The agent page lists this many knowledge documents (the v1 list's largest page). */
const KNOWLEDGE_MAX = 100
/** Calls today are counted from one read of today's tries; a busier day reads "1000+" (counting more is the analytics page's work). */
const CALLS_TODAY_READ = 1000

export interface AgentRoutesDeps {
  auth: KernelHttp['console']
  agents: AgentService
  versions: Pick<VersionService, 'status'>
  calls: Pick<CallReads, 'page'>
  numbers: Pick<PhoneNumberService, 'list'>
  clock: Clock
  knowledge: Pick<KnowledgeService, 'page'>
}

const AgentRow = t.Object({
  id: t.String(),
  name: t.String(),
  status: t.Union([t.Literal('draft'), t.Literal('published')]),
  publishedVersion: t.Union([t.Integer(), t.Null()], { description: 'the version number served, null while nothing is published' }),
  hasUnpublishedChanges: t.Boolean(),
  numbers: t.Array(t.String(), { description: 'the phone numbers attached to it (voice and chat app)' }),
  callsToday: t.Integer({ description: 'calls (not simulated) since midnight in the workspace time zone' }),
  callsTodayCapped: t.Boolean({ description: `true when the day had more than ${CALLS_TODAY_READ} tries, so callsToday is a floor` }),
  updatedAt: t.String({ description: 'the last change to its draft' }),
})

export function consoleAgentRoutes(d: AgentRoutesDeps) {
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(d.auth)
    .get(
      '/workspaces/:ws/agents',
      async ({ workspace }) => {
        const agents = await d.agents.list(workspace.id, AGENTS_MAX, null)
        const numbers = await d.numbers.list(workspace.id)
        const now = d.clock.now()
        const since = new Date(startOfLocalDay(localTime(now, workspace.timezone).day, workspace.timezone)).toISOString()
        const until = new Date(startOfLocalDay(addDays(localTime(now, workspace.timezone).day, 1), workspace.timezone)).toISOString()
        // A simulation run's calls are not callers': they are not counted.
        const tries = await d.calls.page(workspace.id, { since, until, simulated: false }, CALLS_TODAY_READ, null)
        const calls = new Map<string, Set<string>>()
        for (const row of tries) {
          if (!calls.has(row.agentId)) calls.set(row.agentId, new Set())
          calls.get(row.agentId)!.add(row.callId)
        }
        const items = await Promise.all(
          agents.map(async (a) => {
            const s = await d.versions.status(workspace.id, a.id)
            return {
              id: a.id,
              name: a.name,
              status: s.status,
              publishedVersion: s.publishedVersionId,
              hasUnpublishedChanges: s.status === 'published' && s.hasUnpublishedChanges,
              numbers: numbers.filter((n) => n.agentId === a.id).map((n) => n.number),
              callsToday: calls.get(a.id)?.size ?? 0,
              callsTodayCapped: tries.length === CALLS_TODAY_READ,
              updatedAt: a.updatedAt,
            }
          }),
        )
        return { items }
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        detail: {
          summary: `The workspace's agents (newest first, ${AGENTS_MAX} at most) with their published version, numbers, calls today and last change`,
          responses: answers({ 200: t.Object({ items: t.Array(AgentRow) }), ...consoleErrors(404) }),
        },
      },
    )
    .get('/workspaces/:ws/agents/:id', async ({ params, workspace }) => d.agents.present(await d.agents.get(workspace.id, params.id)), {
      params: t.Object({ ws: t.String(), id: t.String() }),
      workspace: true,
      detail: { summary: 'One agent as GET /api/v1/agents/{id} answers it: its draft', responses: answers({ 200: Agent, ...consoleErrors(404) }) },
    })
    .get(
      '/workspaces/:ws/agents/:id/knowledge',
      async ({ params, workspace }) => {
        await d.agents.get(workspace.id, params.id)
        return { items: (await d.knowledge.page(workspace.id, params.id, KNOWLEDGE_MAX, null)).map(toDocumentResponse) }
      },
      {
        params: t.Object({ ws: t.String(), id: t.String() }),
        workspace: true,
        detail: {
          summary: `The agent's knowledge documents (GET /api/v1/agents/{id}/knowledge, newest ${KNOWLEDGE_MAX})`,
          responses: answers({ 200: t.Object({ items: t.Array(KnowledgeDocumentResponse) }), ...consoleErrors(404) }),
        },
      },
    )
    .patch('/workspaces/:ws/agents/:id', async ({ params, body, workspace }) => d.agents.present(await d.agents.patch({ workspace, plan: workspace.plan }, params.id, body)), {
      params: t.Object({ ws: t.String(), id: t.String() }),
      workspace: true,
      body: PatchAgent,
      detail: {
        summary: 'Edit the agent’s draft: PATCH /api/v1/agents/{id} under the console token (the same rules; 400 naming the member)',
        responses: answers({ 200: Agent, ...consoleErrors(400, 404) }),
      },
    })
}
