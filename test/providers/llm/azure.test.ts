import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLanguageModel } from '../../../src/providers/llm/index'
import { AZURE_DEFAULT_API_VERSION } from '../../../src/providers/llm/openai'
import { type FakeOpenAI, startOpenAIFake } from '../../fakes/openai'
import { collect, failure, textOf } from './helpers'

const KEY = 'azure-key-0123456789abcdef0123'
let fake: FakeOpenAI
const azure = (o: { apiKey?: string; deployment?: string; apiVersion?: string } = {}) =>
  createLanguageModel({ provider: 'azure', model: '', baseUrl: fake.origin, apiKey: o.apiKey ?? KEY, deployment: o.deployment ?? 'support-gpt4o', apiVersion: o.apiVersion })

beforeAll(() => {
  fake = startOpenAIFake({ apiKey: KEY, deployment: 'support-gpt4o' })
})
afterAll(() => fake.stop())

describe('Azure OpenAI mode', () => {
  test('deployment URL with api-version, api-key header, no bearer, no body model', async () => {
    fake.reply({ kind: 'stream', text: ['Hi', '!'], toolCalls: [{ id: 'call_1', name: 'escalate', args: ['{"reason":', '"x"}'] }] })
    const m = azure()
    expect(m.id).toBe('support-gpt4o')
    expect(m.provider).toBe('azure')
    const evs = await collect(m, { messages: [{ role: 'user', content: 'hi' }], maxTokens: 120 })
    expect(textOf(evs)).toBe('Hi!')
    expect(evs.find((e) => e.type === 'tool_call')).toEqual({ type: 'tool_call', id: 'call_1', name: 'escalate', arguments: { reason: 'x' } })
    const r = fake.requests[fake.requests.length - 1]
    expect(r.path).toBe('/openai/deployments/support-gpt4o/chat/completions')
    expect(r.query).toEqual({ 'api-version': AZURE_DEFAULT_API_VERSION })
    expect(r.headers['api-key']).toBe(KEY)
    expect(r.headers.authorization).toBeUndefined()
    expect(r.body.model).toBeUndefined()
    expect(r.body.max_tokens).toBe(120)
    expect(r.body.stream_options).toEqual({ include_usage: true })
  })

  test('a chosen api-version is used', async () => {
    fake.reply({ kind: 'stream', text: ['ok'] })
    await collect(azure({ apiVersion: '2025-01-01-preview' }), { messages: [{ role: 'user', content: 'hi' }] })
    expect(fake.requests[fake.requests.length - 1].query['api-version']).toBe('2025-01-01-preview')
  })

  test('a wrong key is auth; an unknown deployment is bad_request', async () => {
    const e = await failure(azure({ apiKey: 'wrong-key-xxxxxxxxxxxxxxxx' }), { messages: [{ role: 'user', content: 'hi' }] })
    expect(e).toMatchObject({ kind: 'auth', status: 401, provider: 'azure' })
    expect(e.message).toContain('Access denied')
    const e2 = await failure(azure({ deployment: 'nope' }), { messages: [{ role: 'user', content: 'hi' }] })
    expect(e2).toMatchObject({ kind: 'bad_request', status: 404 })
    expect(e2.message).toContain('deployment')
  })

  test('429 keeps retry-after-ms', async () => {
    fake.reply({
      kind: 'error',
      status: 429,
      code: '429',
      message: 'Requests to the ChatCompletions_Create Operation have exceeded the rate limit.',
      headers: { 'retry-after-ms': '1500', 'retry-after': '2' },
    })
    expect(await failure(azure(), { messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({ kind: 'rate_limit', retryAfterMs: 1500 })
  })

  test('listModels checks the key against the resource and returns the deployment', async () => {
    expect(await azure().listModels()).toEqual([{ id: 'support-gpt4o' }])
    expect(fake.requests[fake.requests.length - 1]).toMatchObject({ method: 'GET', path: '/openai/models', headers: { 'api-key': KEY } })
    expect(
      (
        await azure({ apiKey: 'bad-key-zzzzzzzzzzzzzzzzz' })
          .listModels()
          .catch((e) => e)
      ).kind,
    ).toBe('auth')
  })
})
