import { describe, expect, test } from 'bun:test'
import type { AgentDoc } from '../../../src/features/agents/repository'
import { ServiceModelResolver } from '../../../src/features/conversations/model-resolver'
import { apiErrorOf } from '../../../src/http/refusals'
import { AnthropicChatModel, LocalLanguageModel, OpenAIChatModel } from '../../../src/providers/llm'
import { Refused } from '../../../src/refusals'
import { workspaceDoc } from './harness'

const agent = (model: string) => ({ id: 'ag_1', model }) as AgentDoc
const ws = workspaceDoc()

describe('service model resolver', () => {
  test('local needs no key', async () => {
    expect(await new ServiceModelResolver({}).resolve(ws, agent('local'))).toBeInstanceOf(LocalLanguageModel)
  })

  test('a provider without a configured key is a 503 naming the setting; no fallback', async () => {
    for (const [model, setting] of [
      ['gpt-4o', 'OPENAI_API_KEY'],
      ['claude-sonnet-4', 'ANTHROPIC_API_KEY'],
    ]) {
      const err = await new ServiceModelResolver({ openaiApiKey: model.startsWith('claude') ? 'sk-x' : undefined }).resolve(ws, agent(model)).catch((e) => e)
      expect(err).toBeInstanceOf(Refused)
      expect(apiErrorOf(err)?.status).toBe(503)
      expect(err.message).toContain(setting)
      expect(apiErrorOf(err)?.extra).toEqual({ model, missing: setting })
    }
  })

  test('vendor adapters with the vendor model id', async () => {
    const r = new ServiceModelResolver({ openaiApiKey: 'sk-o', anthropicApiKey: 'sk-a' })
    const gpt = await r.resolve(ws, agent('gpt-4.1-mini'))
    expect(gpt).toBeInstanceOf(OpenAIChatModel)
    expect(gpt.id).toBe('gpt-4.1-mini')
    const claude = await r.resolve(ws, agent('claude-3-5-haiku'))
    expect(claude).toBeInstanceOf(AnthropicChatModel)
    expect(claude.id).toBe('claude-3-5-haiku-latest')
    expect(await r.resolve(ws, agent('gpt-4.1-mini'))).toBe(gpt)
  })

  test('a model no longer in the catalogue is refused, not swapped', async () => {
    const err = await new ServiceModelResolver({}).resolve(ws, agent('gpt-2')).catch((e) => e)
    expect(apiErrorOf(err)?.status).toBe(503)
    expect(err.message).toContain('no longer offered')
  })
})
