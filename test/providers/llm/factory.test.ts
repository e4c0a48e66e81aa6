import { describe, expect, test } from 'bun:test'
import { parseRetryAfter, redact, vendorMessage } from '../../../src/providers/llm/errors'
import { AnthropicChatModel, createLanguageModel, LlmError, LocalLanguageModel, OpenAIChatModel } from '../../../src/providers/llm/index'
import { complete } from '../../../src/providers/llm/port'

describe('createLanguageModel', () => {
  test('builds each provider', () => {
    const openai = createLanguageModel({ provider: 'openai', model: 'gpt-4o-mini', apiKey: 'sk-x' })
    expect(openai).toBeInstanceOf(OpenAIChatModel)
    expect([openai.id, openai.provider]).toEqual(['gpt-4o-mini', 'openai'])
    const compat = createLanguageModel({ provider: 'openai-compatible', model: 'llama3.1', baseUrl: 'http://127.0.0.1:11434/v1' })
    expect([compat.provider, compat.id]).toEqual(['openai-compatible', 'llama3.1'])
    const az = createLanguageModel({ provider: 'azure', model: '', deployment: 'prod-4o', apiKey: 'k', baseUrl: 'https://acme.openai.azure.com' })
    expect([az.provider, az.id]).toEqual(['azure', 'prod-4o'])
    const an = createLanguageModel({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'sk-ant-x' })
    expect(an).toBeInstanceOf(AnthropicChatModel)
    expect(createLanguageModel({ provider: 'local', model: '' })).toBeInstanceOf(LocalLanguageModel)
  })

  test('missing settings are bad_request errors in plain words', () => {
    const cases = [
      () => createLanguageModel({ provider: 'openai', model: 'gpt-4o' }),
      () => createLanguageModel({ provider: 'openai-compatible', model: 'm' }),
      () => createLanguageModel({ provider: 'azure', model: 'm', apiKey: 'k' }),
      () => createLanguageModel({ provider: 'azure', model: '', apiKey: 'k', baseUrl: 'https://a.openai.azure.com' }),
      () => createLanguageModel({ provider: 'anthropic', model: 'claude' }),
      // Not a provider, on purpose: the type would refuse it before the factory could.
      () => createLanguageModel({ provider: 'nope' as never, model: 'm' }),
      () => createLanguageModel({ provider: 'openai-compatible', model: 'm', baseUrl: 'http://192.168.1.5:8000/v1' }),
    ]
    for (const make of cases) {
      let err: unknown
      try {
        make()
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(LlmError)
      expect((err as LlmError).kind).toBe('bad_request')
    }
  })

  test('the local model runs through complete() and lists itself', async () => {
    const local = createLanguageModel({ provider: 'local', model: 'local' })
    expect((await complete(local, { messages: [{ role: 'system', content: 'Greeting: Namaste!' }] })).text).toBe('Namaste!')
    expect(await local.listModels()).toEqual([{ id: 'local', name: 'Local responder (no network)' }])
  })
})

describe('error helpers', () => {
  test('Retry-After: seconds, HTTP date, retry-after-ms', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '3' }))).toBe(3000)
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000)
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '1' }))).toBe(250)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined()
    expect(parseRetryAfter(new Headers())).toBeUndefined()
  })

  test('vendor messages from each known error body shape', () => {
    expect(vendorMessage('{"error":{"message":"m1","type":"x"}}')).toBe('m1')
    expect(vendorMessage('{"type":"error","error":{"type":"api_error","message":"m2"}}')).toBe('m2')
    expect(vendorMessage('{"error":"m3"}')).toBe('m3')
    expect(vendorMessage('{"object":"error","message":"m4"}')).toBe('m4')
    expect(vendorMessage('{"detail":"m5"}')).toBe('m5')
    expect(vendorMessage('<html>502 Bad Gateway</html>')).toBeUndefined()
    expect(vendorMessage('upstream connect error')).toBe('upstream connect error')
  })

  test('redact removes the key and key-shaped strings', () => {
    expect(redact('bad key sk-proj-abcdef123456 and secret123', ['secret123'])).toBe('bad key [redacted] and [redacted]')
    expect(redact('Incorrect API key provided: sk-wro*******zzzz.')).toBe('Incorrect API key provided: [redacted].')
  })
})
