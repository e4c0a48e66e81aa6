/**
 * The OpenAI and Anthropic fakes for one test file: started before its tests, stopped after them.
 * Each fake checks the key it is given, so a request that leaves it out fails as it would live.
 */
import { afterAll, beforeAll } from 'bun:test'
import { type FakeAnthropic, startAnthropicFake } from '../fakes/anthropic'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'

export interface LlmVendorFakes {
  /** Set once the file's tests start (beforeAll). */
  openai: FakeOpenAI
  anthropic: FakeAnthropic
}

export function useLlmVendorFakes(keys: { openai: string; anthropic: string }): LlmVendorFakes {
  const fakes = {} as LlmVendorFakes
  beforeAll(() => {
    fakes.openai = startOpenAIFake({ apiKey: keys.openai })
    fakes.anthropic = startAnthropicFake({ apiKey: keys.anthropic })
  })
  afterAll(async () => {
    await fakes.openai?.stop()
    await fakes.anthropic?.stop()
  })
  return fakes
}
