/**
 * Console reads the app needs and the console lacked (docs/console-app.md lists them): the
 * workspaces to pick from; a workspace's calls (inbound ones too), one call, its events and
 * webhook deliveries, and ending it; conversations across channels with their messages
 * (campaigns: campaign-reads.ts). All under the console token, JSON, newest first with `cursor`.
 */
import { Elysia, t } from 'elysia'
import type { RecordedEvent } from '../../events/bus'
import { answers, consoleErrors } from '../../http/docs'
import { decodeCursor, encodeCursor, pageQuery, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { invalid } from '../../refusals'
import type { WorkspaceCollection } from '../../store/workspace-scoped'
import { type CallReads, type CallTransfers, presentConsoleCall } from '../calls/public'
import { CHANNELS, type ConversationDoc, type ConversationFeature, type MessageDoc, presentMessage } from '../conversations/public'
import type { WebhooksServices } from '../webhooks/public'
import type { WorkspaceRepo } from '../workspaces/public'
import type { InboxExtra, InboxRows } from './inbox-rows'

const Loose = t.Record(t.String(), t.Unknown())
const PageOfLoose = t.Object({ items: t.Array(Loose), nextCursor: t.Union([t.String(), t.Null()]) })
const Ws = t.Object({ ws: t.String() })
const WsId = t.Object({ ws: t.String(), id: t.String() })
const CALL_STATUSES = ['created', 'scheduled', 'ringing', 'connected', 'completed', 'missed', 'failed', 'cancelled'] as const
const CONVERSATION_STATUSES = ['active', 'escalated', 'handled', 'resolved'] as const
const Instant = (what: string) => t.Optional(t.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}(T[0-9:.]+Z)?$', description: `${what}: ISO 8601 UTC instant or date` }))

export interface ReadsDeps {
  auth: KernelHttp['console']
  workspaceRepo: WorkspaceRepo
  calls: CallReads
  transfers: Pick<CallTransfers, 'byHand' | 'destinations'>
  conversations: ConversationFeature['conversations']
  legacyWebhooks: WebhooksServices['legacyWebhooks']
  events: WorkspaceCollection<RecordedEvent>
  inbox: InboxRows
}

/** Conversations read per round while a status filter looks for a page's worth. */
const SCAN = 100

const presentConversation = (c: ConversationDoc, extra: InboxExtra) => ({
  id: c.id,
  agent: c.agentId,
  channel: c.channel,
  customer: c.customer,
  status: c.status,
  test: c.test,
  lastInboundAt: c.lastInboundAt,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
  ...extra,
})

/**
 * A message as the API shows it, plus, on an agent reply, the published version that wrote it (null:
 * test chat, which talks to the draft, or a reply stored before versions were recorded).
 */
const presentConsoleMessage = (m: MessageDoc) => ({ ...presentMessage(m), ...(m.author === 'agent' ? { agentVersion: m.agentVersion ?? null } : {}) })

const presentWorkspace = (w: WorkspaceDoc) => ({ id: w.id, name: w.name, kind: w.kind, parentId: w.parentId, plan: w.plan, status: w.status, createdAt: w.createdAt })

/** A stored instant or date as the store compares it (ISO with milliseconds); 400 for a day that is none. */
function instant(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined
  const at = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
  if (Number.isNaN(at)) throw invalid(field, 'is not a date or an instant (ISO 8601)')
  return new Date(at).toISOString()
}

export function consoleReads(d: ReadsDeps) {
  return new Elysia({ detail: { tags: ['Console'] } })
    .use(d.auth)
    .get('/workspaces', ({ query }) => paginate((limit, after) => d.workspaceRepo.page({ parentId: query.parent ?? null }, limit, after), query, 50, presentWorkspace), {
      query: t.Object({ ...pageQuery(200, 50), parent: t.Optional(t.String({ description: "a developer workspace: list its customers' workspaces" })) }),
      detail: { summary: 'List developer workspaces (or one developer’s customer workspaces), newest first', responses: answers({ 200: PageOfLoose, ...consoleErrors(400) }) },
    })
    .get(
      '/workspaces/:ws/calls',
      ({ query, workspace }) => {
        const filter = {
          ...query,
          since: instant(query.since, 'since'),
          until: instant(query.until, 'until'),
          live: query.live === 'true',
          simulated: query.simulated === undefined ? undefined : query.simulated === 'true',
        }
        return paginate((limit, after) => d.calls.page(workspace.id, filter, limit, after), query, 25, presentConsoleCall)
      },
      {
        params: Ws,
        workspace: true,
        query: t.Object({
          ...pageQuery(100, 25),
          status: t.Optional(t.Union(CALL_STATUSES.map((s) => t.Literal(s)))),
          live: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { description: 'true: ringing or connected calls only' })),
          simulated: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { description: 'true: simulated calls only (a simulation run made them); false: real calls only' })),
          direction: t.Optional(t.Union([t.Literal('inbound'), t.Literal('outbound')])),
          agent: t.Optional(t.String({ maxLength: 60 })),
          phone: t.Optional(t.String({ maxLength: 40, description: 'the customer’s number, E.164' })),
          since: Instant('created at or after'),
          until: Instant('created before'),
        }),
        detail: { summary: 'List the calls of a workspace (every try, inbound too), newest first, with transcripts', responses: answers({ 200: PageOfLoose, ...consoleErrors(400, 404) }) },
      },
    )
    .get('/workspaces/:ws/calls/:id', async ({ params, workspace }) => presentConsoleCall(await d.calls.get(workspace.id, params.id)), {
      params: WsId,
      workspace: true,
      detail: { summary: 'One call as the console shows it: transcript, recording, latency per turn, summary, fields', responses: answers({ 200: Loose, ...consoleErrors(404) }) },
    })
    .delete('/workspaces/:ws/calls/:id', async ({ params, workspace }) => presentConsoleCall(await d.calls.end(workspace.id, params.id)), {
      params: WsId,
      workspace: true,
      detail: { summary: 'End a live call (or cancel a waiting one), inbound calls too', responses: answers({ 200: Loose, ...consoleErrors(404, 409) }) },
    })
    .get('/workspaces/:ws/calls/:id/transfers', async ({ params, workspace }) => ({ items: await d.transfers.destinations(workspace.id, params.id) }), {
      params: WsId,
      workspace: true,
      detail: {
        summary: "Where a call can be transferred: its agent's transfers, as the version it talks as has them",
        responses: answers({ 200: t.Object({ items: t.Array(t.Object({ name: t.String(), phoneNumber: t.String(), mode: t.String() })) }), ...consoleErrors(404) }),
      },
    })
    .post(
      '/workspaces/:ws/calls/:id/transfer',
      async ({ params, body, workspace, set }) => {
        const call = await d.transfers.byHand(workspace, params.id, body.destination)
        set.status = 202
        return presentConsoleCall(call)
      },
      {
        params: WsId,
        workspace: true,
        body: t.Object({ destination: t.String({ minLength: 1, maxLength: 60, description: "the name of one of the agent's transfers" }) }, { additionalProperties: false }),
        detail: {
          summary: "Transfer a live call to one of its agent's transfers, as POST /calls/{id}/transfer does (inbound calls too)",
          responses: answers({ 202: Loose, ...consoleErrors(400, 404, 409, 502) }),
        },
      },
    )
    .get(
      '/workspaces/:ws/calls/:id/activity',
      async ({ params, workspace }) => {
        const row = await d.calls.get(workspace.id, params.id)
        const log = d.events.in(workspace.id)
        const found = await Promise.all([
          log.find({ 'data.id': row.callId }, { sort: [['createdAt', 1]], limit: 100 }),
          log.find({ 'data.callId': row.callId }, { sort: [['createdAt', 1]], limit: 100 }),
          row.conversationId ? log.find({ 'data.conversationId': row.conversationId }, { sort: [['createdAt', 1]], limit: 100 }) : [],
        ])
        const byId = new Map(found.flat().map((e) => [e.id, e]))
        const events = [...byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt))
        const ids = new Set(events.map((e) => e.id))
        // Legacy endpoints keep a record per delivery (v1 webhooks are one attempt, kept by no record).
        const deliveries = []
        for (const endpoint of await d.legacyWebhooks.list(workspace.id)) {
          for (const delivery of await d.legacyWebhooks.deliveries(workspace.id, endpoint.number, 200)) {
            if (ids.has(delivery.event_id)) deliveries.push({ ...delivery, endpoint: { id: endpoint.number, url: endpoint.url } })
          }
        }
        return { events: events.map((e) => ({ id: e.id, type: e.type, createdAt: e.createdAt, data: e.data })), deliveries }
      },
      {
        params: WsId,
        workspace: true,
        detail: {
          summary: 'The events of a call (and of its conversation) and their legacy webhook deliveries',
          responses: answers({ 200: t.Object({ events: t.Array(Loose), deliveries: t.Array(Loose) }), ...consoleErrors(404) }),
        },
      },
    )
    .get(
      '/workspaces/:ws/conversations',
      async ({ query, workspace }) => {
        // A status filter walks pages of the workspace's list (the store has no index for it), 20 at most.
        const wanted = (c: ConversationDoc) => (query.status === undefined || c.status === query.status) && (query.test === 'true' || !c.test)
        const limit = query.limit ?? 25
        let after = decodeCursor(query.cursor)
        const items: ConversationDoc[] = []
        let more = true
        for (let round = 0; more && items.length < limit && round < 20; round++) {
          const rows = await d.conversations.list(workspace.id, { channel: query.channel }, SCAN, after)
          more = rows.length === SCAN
          for (const c of rows) {
            after = { createdAt: c.createdAt, id: c.id }
            if (wanted(c) && items.push(c) === limit) break
          }
        }
        const extras = await d.inbox.extras(workspace.id, items)
        return { items: items.map((c, i) => presentConversation(c, extras[i]!)), nextCursor: after && (more || items.length === limit) ? encodeCursor(after) : null }
      },
      {
        params: Ws,
        workspace: true,
        query: t.Object({
          ...pageQuery(100, 25),
          channel: t.Optional(t.Union(CHANNELS.map((c) => t.Literal(c)))),
          status: t.Optional(t.Union(CONVERSATION_STATUSES.map((s) => t.Literal(s)))),
          test: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { description: 'true: test chats too' })),
        }),
        detail: { summary: 'The inbox: conversations on every channel, newest first', responses: answers({ 200: PageOfLoose, ...consoleErrors(400, 404) }) },
      },
    )
    .get(
      '/workspaces/:ws/conversations/:id/messages',
      async ({ params, query, workspace }) => {
        await d.conversations.get(workspace.id, params.id)
        return paginate((limit, after) => d.conversations.listMessages(params.id, {}, limit, after), query, 50, presentConsoleMessage)
      },
      {
        params: WsId,
        workspace: true,
        query: t.Object(pageQuery(100, 50)),
        detail: { summary: "A conversation's messages, newest first", responses: answers({ 200: PageOfLoose, ...consoleErrors(400, 404) }) },
      },
    )
    .get(
      '/workspaces/:ws/conversations/:id',
      async ({ params, workspace }) => {
        const c = await d.conversations.get(workspace.id, params.id)
        return presentConversation(c, (await d.inbox.extras(workspace.id, [c]))[0]!)
      },
      {
        params: WsId,
        workspace: true,
        detail: { summary: 'One conversation', responses: answers({ 200: Loose, ...consoleErrors(404) }) },
      },
    )
    .get('/workspaces/:ws', async ({ workspace }) => presentWorkspace(workspace), {
      params: Ws,
      workspace: true,
      detail: { summary: 'One workspace', responses: answers({ 200: Loose, ...consoleErrors(404) }) },
    })
}
