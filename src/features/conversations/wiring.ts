/**
 * Builds the conversation feature from the services it stands on, so services.ts wires it in one
 * call: the store-backed ConversationService, the model resolver (service keys, wrapped by BYOK's
 * when that feature is there), the tool runner, the engine, and test chat.
 */
import type { Clock } from '../../clock'
import type { Config } from '../../config'
import type { Coordination } from '../../coordination/port'
import type { EventBus } from '../../events/bus'
import type { Logger } from '../../logger'
import type { DocumentStore } from '../../store/port'
import type { AgentService } from '../agents/public'
import type { ByokRuntime } from '../byok/public'
import type { Meter } from '../usage/public'
import { ConversationEngine } from './engine'
import { KeyAwareResolver, type ModelResolver, ServiceModelResolver } from './model-resolver'
import { openConversations } from './repository'
import { ConversationService } from './service'
import { TestChatService } from './test-chat'
import { type KnowledgeSearcher, ToolRunner } from './tool-runner'

export interface ConversationFeature {
  conversations: ConversationService
  models: ModelResolver
  engine: ConversationEngine
  testChat: TestChatService
  /** The agent's tools, for channels that run one outside a turn (the widget's welcome form captures a lead). */
  tools: ToolRunner
}

export async function buildConversationFeature(deps: {
  config: Config
  store: DocumentStore
  clock: Clock
  coordination: Coordination
  bus: EventBus
  meter: Meter
  /** BYOK keys' models, when the byok feature is built. */
  byok?: Pick<ByokRuntime, 'model'>
  agents: AgentService
  knowledge: KnowledgeSearcher
  logger?: Logger
}): Promise<ConversationFeature> {
  const { conversations: conversationRepo, messages } = await openConversations(deps.store)
  const conversations = new ConversationService(conversationRepo, messages, deps.clock, deps.bus, deps.store)
  deps.agents.onDelete((agent) => conversations.removeAllForAgent(agent.workspaceId, agent.id))
  const service = new ServiceModelResolver({
    openaiApiKey: deps.config.providers.openaiApiKey,
    openaiBaseUrl: deps.config.providers.openaiBaseUrl,
    anthropicApiKey: deps.config.providers.anthropicApiKey,
    anthropicBaseUrl: deps.config.providers.anthropicBaseUrl,
  })
  const models: ModelResolver = deps.byok ? new KeyAwareResolver(service, deps.byok) : service
  const tools = new ToolRunner({ knowledge: deps.knowledge, conversations, bus: deps.bus })
  const engine = new ConversationEngine({ conversations, tools, models, meter: deps.meter, clock: deps.clock, logger: deps.logger })
  const testChat = new TestChatService({ agents: deps.agents, conversations, engine, models, coordination: deps.coordination, clock: deps.clock })
  return { conversations, models, engine, testChat, tools }
}
