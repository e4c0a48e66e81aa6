/**
 * Which LanguageModel runs an agent: the agent's catalogue model on the service's own provider
 * accounts. BYOK wraps this resolver (KeyAwareResolver below): it gets the workspace and the
 * agent, so it can pick the developer's (or the customer's) keys instead.
 *
 * A model whose provider has no key configured is refused with 503 naming the missing setting:
 * never a silent fallback to another model, which would answer customers with a different brain
 * than the developer chose (docs/spec.md BYOK: "there is no fallback").
 */

import { findModel, MODELS } from '../../catalog/models'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { createLanguageModel, type LanguageModel } from '../../providers/llm'
import { unavailable } from '../../refusals'
import type { AgentDoc } from '../agents/public'

export interface ModelResolver {
  resolve(workspace: WorkspaceDoc, agent: AgentDoc): Promise<LanguageModel>
}

/** The service's own provider accounts (config.providers); base URLs only for tests and proxies. */
export interface ProviderAccounts {
  openaiApiKey?: string
  anthropicApiKey?: string
  openaiBaseUrl?: string
  anthropicBaseUrl?: string
}

/**
 * Catalogue id → the id the vendor's API takes. OpenAI's ids are the catalogue's; Anthropic's
 * API wants a dated id or one of its moving aliases, which we use so the newest snapshot serves.
 */
const VENDOR_MODEL: Record<string, string> = {
  'claude-3-5-haiku': 'claude-3-5-haiku-latest',
  'claude-sonnet-4': 'claude-sonnet-4-0',
  'claude-opus-4': 'claude-opus-4-0',
}

const KEY_SETTING = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const
const VENDOR_NAME = { openai: 'OpenAI', anthropic: 'Anthropic' } as const

export class ServiceModelResolver implements ModelResolver {
  /** Adapters hold no per-request state, so one per model id is reused. */
  private readonly cache = new Map<string, LanguageModel>()

  constructor(private readonly accounts: ProviderAccounts) {}

  async resolve(_workspace: WorkspaceDoc, agent: AgentDoc): Promise<LanguageModel> {
    const cached = this.cache.get(agent.model)
    if (cached) return cached
    const model = this.build(agent.model)
    this.cache.set(agent.model, model)
    return model
  }

  private build(id: string): LanguageModel {
    const info = findModel(id)
    if (!info) {
      // Only possible if a model left the catalogue after an agent chose it.
      throw unavailable(`model ${id} is no longer offered; choose one of ${MODELS.map((m) => m.id).join(', ')} (PATCH the agent)`, undefined, { model: id })
    }
    if (info.provider === 'local') return createLanguageModel({ provider: 'local', model: 'local' })
    const apiKey = info.provider === 'openai' ? this.accounts.openaiApiKey : this.accounts.anthropicApiKey
    if (!apiKey) {
      const setting = KEY_SETTING[info.provider]
      throw unavailable(
        `model ${id} runs on ${VENDOR_NAME[info.provider]}, and the service has no ${VENDOR_NAME[info.provider]} key configured (${setting}); ` +
          'choose another model for the agent, or ask the operator to set the key',
        undefined,
        { model: id, missing: setting },
      )
    }
    const baseUrl = info.provider === 'openai' ? this.accounts.openaiBaseUrl : this.accounts.anthropicBaseUrl
    return createLanguageModel({ provider: info.provider, model: VENDOR_MODEL[id] ?? id, apiKey, baseUrl })
  }
}

/**
 * BYOK first: a workspace running on its own keys gets its own model (no fallback to ours when
 * that fails); any other gets the service's.
 */
export class KeyAwareResolver implements ModelResolver {
  constructor(
    private readonly service: ModelResolver,
    private readonly own: { model(workspace: WorkspaceDoc, agentId: string): Promise<LanguageModel | null> },
  ) {}

  async resolve(workspace: WorkspaceDoc, agent: AgentDoc): Promise<LanguageModel> {
    return (await this.own.model(workspace, agent.id)) ?? this.service.resolve(workspace, agent)
  }
}
