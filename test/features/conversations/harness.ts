/**
 * The conversation engine on real parts (SQLite store, local coordination, event bus, knowledge
 * service, usage ledger) in a temp dir, with a manual clock and a swappable model resolver.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../src/clock'
import { openCoordination } from '../../../src/coordination'
import type { Coordination } from '../../../src/coordination/port'
import { EventBus, type RecordedEvent } from '../../../src/events/bus'
import { newAgentDoc } from '../../../src/features/agents/defaults'
import type { AgentDoc } from '../../../src/features/agents/repository'
import { ConversationEngine } from '../../../src/features/conversations/engine'
import { type ModelResolver, type ProviderAccounts, ServiceModelResolver } from '../../../src/features/conversations/model-resolver'
import { openConversations } from '../../../src/features/conversations/repository'
import { ConversationService } from '../../../src/features/conversations/service'
import { type CallbackScheduler, ToolRunner } from '../../../src/features/conversations/tool-runner'
import { KnowledgeService } from '../../../src/features/knowledge/service'
import { openNotifications } from '../../../src/features/notifications/repository'
import { NotificationService } from '../../../src/features/notifications/service'
import { UsageLedger } from '../../../src/features/usage/ledger'
import { Meter } from '../../../src/features/usage/meter'
import { RentBook, rentMarksSpec } from '../../../src/features/usage/rent'
import { WalletService } from '../../../src/features/usage/wallet'
import { newWorkspaceDoc, openWorkspaces, type WorkspaceDoc } from '../../../src/features/workspaces/repository'
import { createLogger } from '../../../src/logger'
import type { DocumentStore } from '../../../src/store/port'
import { openSqliteStore } from '../../../src/store/sqlite'

export const START = Date.parse('2026-03-02T09:00:00.000Z')

export interface Harness {
  clock: ManualClock
  store: DocumentStore
  coordination: Coordination
  bus: EventBus
  events: RecordedEvent[]
  knowledge: KnowledgeService
  conversations: ConversationService
  ledger: UsageLedger
  engine: ConversationEngine
  workspace: WorkspaceDoc
  /** An agent as the agents service would store it (defaults of a new agent), not stored. */
  agent(fields?: Partial<AgentDoc>): Promise<AgentDoc>
  close(): Promise<void>
}

export function workspaceDoc(id = 'ws_engine'): WorkspaceDoc {
  const fields = { id, kind: 'developer' as const, parentId: null, name: 'Engine test', plan: 'scale' as const, currency: 'USD' as const, timezone: 'UTC', whiteLabel: false }
  return newWorkspaceDoc(fields, new Date(START).toISOString())
}

export async function startHarness(opts: { accounts?: ProviderAccounts; models?: ModelResolver; callbacks?: CallbackScheduler } = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'engine-'))
  const clock = new ManualClock(START)
  const store = await openSqliteStore(join(dir, 'service.db'))
  const coordination = await openCoordination({ dataDir: dir })
  const bus = await EventBus.open(store, coordination, clock, createLogger('silent'))
  const events: RecordedEvent[] = []
  bus.subscribe((e) => void events.push(e))
  const knowledge = await KnowledgeService.open(store, clock)
  const { conversations: conversationRepo, messages } = await openConversations(store)
  const conversations = new ConversationService(conversationRepo, messages, clock, bus, store)
  const ledger = await UsageLedger.open(store)
  const workspaces = await openWorkspaces(store)
  const notifications = new NotificationService(await openNotifications(store), (id) => workspaces.get(id), clock)
  const rent = new RentBook({ ledger, workspaces, numbersOf: async () => [], marks: await store.collection(rentMarksSpec), clock })
  const wallet = await WalletService.open(store, { ledger, rent, notifications, clock })
  const meter = new Meter({ ledger, wallet, rent, workspaces, clock })
  const models = opts.models ?? new ServiceModelResolver(opts.accounts ?? {})
  const tools = new ToolRunner({ knowledge, conversations, bus, callbacks: opts.callbacks })
  const engine = new ConversationEngine({ conversations, tools, models, meter, clock })
  const workspace = workspaceDoc()
  await workspaces.insert(workspace)
  let n = 0
  return {
    clock,
    store,
    coordination,
    bus,
    events,
    knowledge,
    conversations,
    ledger,
    engine,
    workspace,
    agent: async (fields = {}) => ({
      ...newAgentDoc(workspace.id, `Agent ${++n}`, 'local', new Date(clock.now()).toISOString()),
      ...fields,
    }),
    async close() {
      await bus.close()
      await coordination.close()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Refunds

Tell us within 48 hours and we refund you in full. Refunds take 3 to 5 working days to reach your card.`
