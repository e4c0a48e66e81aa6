/**
 * Agent analytics (docs/spec.md "Analytics answer"), computed by store aggregation (`count`, `group`)
 * over the agent's conversations, messages, knowledge-search log and recorded events — never by
 * loading every message. The only documents read are one or two per listed question row (its
 * newest search, and for a gap its closest search), so the work grows with `rows`, not traffic.
 *
 * Window: the last `days` UTC calendar days, today included, from 00:00 UTC of the first day to
 * now (service clock). Conversations count in the window by when they started; messages, replies,
 * leads and searches by when they happened. Test chats count like any conversation (they are in
 * the inbox and the allowance, docs/spec.md), and their searches are in the same log; a
 * simulations run's (flagged `simulated`) do not: they test the agent, nobody talked to it.
 */
import { type Clock, iso } from '../../clock'
import type { RecordedEvent } from '../../events/bus'
import type { Collection, DocumentStore, Group } from '../../store/port'
import { type ScopedCollection, WorkspaceCollection } from '../../store/workspace-scoped'
import { CHANNELS, type ConversationDoc, conversationsSpec, type MessageDoc, messagesSpec } from '../conversations/public'
import type { KnowledgeSearch } from '../knowledge/public'
import { SEARCHES } from '../knowledge/public'
import type { Analytics } from './model'

const DAY_MS = 24 * 60 * 60 * 1000

/** An agent's analytics read its workspace's rows only: every source is read through `in(workspaceId)`. */
export interface AnalyticsSources {
  conversations: WorkspaceCollection<ConversationDoc>
  messages: WorkspaceCollection<MessageDoc>
  searches: WorkspaceCollection<KnowledgeSearch>
  events: WorkspaceCollection<RecordedEvent>
}

/** The UTC days of the window, oldest first, and the instant it starts. */
export function analyticsWindow(days: number, nowMs: number): { since: string; dayKeys: string[] } {
  const now = new Date(nowMs)
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const start = today - (days - 1) * DAY_MS
  const dayKeys = Array.from({ length: days }, (_, i) => iso(start + i * DAY_MS).slice(0, 10))
  return { since: iso(start), dayKeys }
}

// A simulations run's conversations, messages, searches and leads are tests of the agent, not its traffic.
const agentWindow = (agentId: string, since: string) => ({ agentId, createdAt: { $gte: since }, simulated: { $ne: true } })
type AgentWindow = ReturnType<typeof agentWindow>

const countsBy = (groups: Group[]): Map<string, number> => new Map(groups.filter((g) => g.key !== null).map((g) => [String(g.key), g.count]))
const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places

export class AnalyticsService {
  constructor(
    private readonly sources: AnalyticsSources,
    private readonly clock: Clock,
  ) {}

  /** The events collection belongs to the bus; the others are opened by their specs (same store instances). */
  static async open(store: DocumentStore, events: Collection<RecordedEvent>, clock: Clock): Promise<AnalyticsService> {
    const [conversations, messages, searches] = await Promise.all([
      store.collection<ConversationDoc>(conversationsSpec),
      store.collection<MessageDoc>(messagesSpec),
      store.collection<KnowledgeSearch>(SEARCHES),
    ])
    const sources = {
      conversations: new WorkspaceCollection(conversations),
      messages: new WorkspaceCollection(messages),
      searches: new WorkspaceCollection(searches),
      events: new WorkspaceCollection(events),
    }
    return new AnalyticsService(sources, clock)
  }

  async forAgent(workspaceId: string, agentId: string, days: number, rows: number): Promise<Analytics> {
    const { since, dayKeys } = analyticsWindow(days, this.clock.now())
    const window = agentWindow(agentId, since)
    const [conversations, messages, searches, events] = [
      this.sources.conversations.in(workspaceId),
      this.sources.messages.in(workspaceId),
      this.sources.searches.in(workspaceId),
      this.sources.events.in(workspaceId),
    ]
    const publicMessages = { ...window, internal: false }
    const replies = { ...publicMessages, author: 'agent' }
    const leads = { agentId, createdAt: { $gte: since }, type: 'lead.captured', 'data.simulated': { $ne: true } }

    const [byStatus, byCustomer, byDay, byHour, byChannel, messageCount, replyCount, repliesByDay, leadCount, leadsByDay, byFound] = await Promise.all([
      conversations.group(window, { by: 'status' }),
      conversations.group(window, { by: 'customerKey' }),
      conversations.group(window, { by: { path: 'createdAt', unit: 'day' } }),
      conversations.group(window, { by: { path: 'createdAt', unit: 'hour' } }),
      conversations.group(window, { by: 'channel' }),
      messages.count(publicMessages),
      messages.count(replies),
      messages.group(replies, { by: { path: 'createdAt', unit: 'day' } }),
      events.count(leads),
      events.group(leads, { by: { path: 'createdAt', unit: 'day' } }),
      searches.group(window, { by: 'found' }),
    ])

    const status = countsBy(byStatus)
    const conversationCount = byStatus.reduce((n, g) => n + g.count, 0)
    const searchCount = byFound.reduce((n, g) => n + g.count, 0)
    const unanswered = byFound.find((g) => g.key === false)?.count ?? 0
    const escalated = status.get('escalated') ?? 0
    const humanHandled = status.get('handled') ?? 0
    const [day, replyDay, leadDay, hour, channel] = [byDay, repliesByDay, leadsByDay, byHour, byChannel].map(countsBy)

    return {
      days,
      totals: {
        conversations: conversationCount,
        customers: byCustomer.filter((g) => g.key !== null).length,
        messages: messageCount,
        agent_replies: replyCount,
        leads: leadCount,
        escalated,
        resolved: status.get('resolved') ?? 0,
        human_handled: humanHandled,
        searches: searchCount,
        unanswered,
      },
      daily: dayKeys.map((d) => ({ day: d, conversations: day.get(d) ?? 0, replies: replyDay.get(d) ?? 0, leads: leadDay.get(d) ?? 0 })),
      hourly: Array.from({ length: 24 }, (_, h) => ({ hour: h, conversations: hour.get(String(h)) ?? 0 })),
      channels: CHANNELS.map((kind) => ({ kind, conversations: channel.get(kind) ?? 0 })),
      knowledgeGaps: await this.gaps(searches, window, rows),
      topQuestions: await this.topQuestions(searches, window, rows),
      derived: {
        // `escalated` and `handled` are current statuses, so no conversation is counted twice.
        neededAPerson: escalated + humanHandled,
        answerRate: searchCount ? round((searchCount - unanswered) / searchCount, 4) : null,
      },
    }
  }

  /** Questions searched with nothing found, grouped by their normalised form, most asked first. */
  private async gaps(searches: ScopedCollection<KnowledgeSearch>, window: AgentWindow, rows: number): Promise<Analytics['knowledgeGaps']> {
    const missed = { ...window, found: false }
    const top = topGroups(await searches.group(missed, { by: 'queryKey' }), rows)
    return Promise.all(
      top.map(async ({ key, count }) => {
        const same = { ...missed, queryKey: key }
        const [newest] = await searches.find(same, { sort: [['createdAt', -1]], limit: 1 })
        const [closest] = await searches.find(same, { sort: [['bestSimilarity', -1]], limit: 1 })
        return { query: newest?.query ?? key, asked: count, last_asked: newest?.createdAt ?? '', best_similarity: round(closest?.bestSimilarity ?? 0, 3) }
      }),
    )
  }

  /** The most asked questions, with how many of those searches found an answer. */
  private async topQuestions(searches: ScopedCollection<KnowledgeSearch>, window: AgentWindow, rows: number): Promise<Analytics['topQuestions']> {
    const [all, found] = await Promise.all([searches.group(window, { by: 'queryKey' }), searches.group({ ...window, found: true }, { by: 'queryKey' })])
    const answered = countsBy(found)
    return Promise.all(
      topGroups(all, rows).map(async ({ key, count }) => {
        const [newest] = await searches.find({ ...window, queryKey: key }, { sort: [['createdAt', -1]], limit: 1 })
        return { query: newest?.query ?? key, asked: count, answered: answered.get(key) ?? 0, last_asked: newest?.createdAt ?? '' }
      }),
    )
  }
}

/** Most frequent first; ties in key order so the same data always gives the same rows. */
function topGroups(groups: Group[], rows: number): { key: string; count: number }[] {
  return groups
    .filter((g) => g.key !== null && g.key !== '')
    .map((g) => ({ key: String(g.key), count: g.count }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, rows)
}
