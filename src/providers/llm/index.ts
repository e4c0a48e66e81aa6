/**
 * Builds a LanguageModel from a provider id and its credentials — the service's own keys or a
 * developer's BYOK record. Every model it returns can also list the models its key reaches
 * (`listModels`), which is how BYOK verifies a key before saving it.
 */
import { AnthropicChatModel } from './anthropic'
import { LlmError } from './errors'
import { LocalLanguageModel } from './local'
import { OpenAIChatModel } from './openai'
import type { LanguageModel, ModelCatalog } from './port'
import type { FetchLike } from './transport'

export type LlmProvider = 'openai' | 'openai-compatible' | 'azure' | 'anthropic' | 'local'

export const LLM_PROVIDERS: readonly LlmProvider[] = ['openai', 'openai-compatible', 'azure', 'anthropic', 'local']

export interface LanguageModelConfig {
  provider: LlmProvider
  /** Vendor model id; for Azure the deployment is used when omitted. Ignored by `local`. */
  model: string
  apiKey?: string
  /** openai: default https://api.openai.com/v1; openai-compatible: required (…/v1);
   *  azure: the resource endpoint (https://<resource>.openai.azure.com); anthropic: default https://api.anthropic.com */
  baseUrl?: string
  /** azure only */
  deployment?: string
  /** azure only; default AZURE_DEFAULT_API_VERSION */
  apiVersion?: string
  fetch?: FetchLike
  /** Deadlines (ms); defaults and their reasons in transport.ts. */
  headersTimeoutMs?: number
  idleTimeoutMs?: number
}

export type ConfiguredLanguageModel = LanguageModel & ModelCatalog

const missing = (provider: string, what: string) => new LlmError({ kind: 'bad_request', provider, message: `The ${provider} provider needs ${what}.` })

export function createLanguageModel(cfg: LanguageModelConfig): ConfiguredLanguageModel {
  const common = { fetch: cfg.fetch, headersTimeoutMs: cfg.headersTimeoutMs, idleTimeoutMs: cfg.idleTimeoutMs }
  switch (cfg.provider) {
    case 'local':
      return new LocalLanguageModel()
    case 'openai':
      if (!cfg.apiKey) throw missing('openai', 'an API key')
      if (!cfg.model) throw missing('openai', 'a model')
      return new OpenAIChatModel({ ...common, provider: 'openai', model: cfg.model, apiKey: cfg.apiKey, baseUrl: cfg.baseUrl })
    case 'openai-compatible':
      if (!cfg.baseUrl) throw missing('openai-compatible', 'a base URL')
      if (!cfg.model) throw missing('openai-compatible', 'a model')
      // The key is optional: Ollama and llama.cpp servers usually run without one.
      return new OpenAIChatModel({ ...common, provider: 'openai-compatible', model: cfg.model, apiKey: cfg.apiKey, baseUrl: cfg.baseUrl })
    case 'azure': {
      if (!cfg.apiKey) throw missing('azure', 'an API key')
      if (!cfg.baseUrl) throw missing('azure', 'the resource endpoint')
      const deployment = cfg.deployment || cfg.model
      if (!deployment) throw missing('azure', 'a deployment name')
      return new OpenAIChatModel({
        ...common,
        provider: 'azure',
        model: cfg.model || deployment,
        apiKey: cfg.apiKey,
        baseUrl: cfg.baseUrl,
        azure: { deployment, apiVersion: cfg.apiVersion },
      })
    }
    case 'anthropic':
      if (!cfg.apiKey) throw missing('anthropic', 'an API key')
      if (!cfg.model) throw missing('anthropic', 'a model')
      return new AnthropicChatModel({ ...common, model: cfg.model, apiKey: cfg.apiKey, baseUrl: cfg.baseUrl })
    default: {
      const never: never = cfg.provider
      throw new LlmError({
        kind: 'bad_request',
        provider: String(never),
        message: `Unknown LLM provider "${String(never)}"; valid ids: ${LLM_PROVIDERS.join(', ')}.`,
      })
    }
  }
}

export { AnthropicChatModel } from './anthropic'
export { isLlmError, LlmError, type LlmErrorKind } from './errors'
export { LocalLanguageModel } from './local'
export { OpenAIChatModel } from './openai'
export type { ChatMessage, Completion, FinishReason, LanguageModel, LlmEvent, ModelCatalog, ModelInfo, StreamRequest, ToolCall, ToolSpec, Usage } from './port'
export { complete } from './port'
