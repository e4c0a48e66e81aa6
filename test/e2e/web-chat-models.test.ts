/**
 * Website chat with a provider model: the reply streams as the OpenAI-protocol server
 * writes it, a provider failing mid-turn ends the stream with `error` (the visitor's message kept),
 * and a model with no provider key is refused before anything is written.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { readEvents } from '../support/sse'

const KEY = 'sk-web-chat-models-0000'
let fake: FakeOpenAI
let s: TestServer
let bare: TestServer
let dev: { id: string; key: string }

const publishedAgent = async (server: TestServer, key: string, body: Record<string, unknown>) => {
  const r = await server.api('POST', '/agents', { key, body: { name: 'Model shop', ...body } })
  expect(r.status).toBe(201)
  const pub = await fetch(`${server.url}/agents/${r.body.id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })
  expect(pub.status).toBe(200)
  return r.body as { id: string; webKey: string }
}
const post = (server: TestServer, path: string, body: unknown) =>
  fetch(`${server.url}/api/v1/web/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const session = async (server: TestServer, webKey: string) => ((await (await post(server, `${webKey}/sessions`, {})).json()) as any).session as string

beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY })
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl })
  dev = await s.developer({ plan: 'scale' })
  bare = await startTestServer()
})
afterAll(async () => {
  await s.stop()
  await bare.stop()
  await fake.stop()
})

describe('website chat on a provider model', () => {
  test('the reply streams piece by piece as the model writes it', async () => {
    const agent = await publishedAgent(s, dev.key, { model: 'gpt-4o-mini' })
    fake.reply({ kind: 'stream', text: ['We open ', 'at 7 am ', 'every day.'] })
    const res = await post(s, `${agent.webKey}/messages`, { session: await session(s, agent.webKey), message: 'When do you open?' })
    expect(res.status).toBe(200)
    const events = await readEvents(res)
    expect(events.filter((e) => e.event === 'token').map((e) => e.data.text)).toEqual(['We open ', 'at 7 am ', 'every day.'])
    expect(events.at(-1)).toMatchObject({ event: 'reply', data: { text: 'We open at 7 am every day.' } })
    // The published agent's instructions went to the model (the system prompt names it).
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain('Model shop')
  })

  test('a provider failing mid-turn ends the stream with error; the message stays, without a reply', async () => {
    const agent = await publishedAgent(s, dev.key, { model: 'gpt-4o-mini' })
    fake.reply({ kind: 'error', status: 503, message: 'overloaded' })
    const res = await post(s, `${agent.webKey}/messages`, { session: await session(s, agent.webKey), message: 'Hello?' })
    const events = await readEvents(res)
    expect(events.map((e) => e.event)).toEqual(['accepted', 'error'])
    expect(events[1]!.data.status).toBe(503) // a vendor 503 passes with time
    const messages = await s.api('GET', `/conversations/${events[0]!.data.conversationId}/messages`, { key: dev.key })
    expect(messages.body.items.map((m: any) => m.author)).toEqual(['customer'])
  })

  test('a model with no provider key is refused (503) before anything is written', async () => {
    const d = await bare.developer({ plan: 'scale' })
    const agent = await publishedAgent(bare, d.key, { model: 'gpt-4o-mini' })
    const res = await post(bare, `${agent.webKey}/messages`, { session: await session(bare, agent.webKey), message: 'Hi' })
    expect(res.status).toBe(503)
    expect(((await res.json()) as any).missing).toBe('OPENAI_API_KEY')
    expect((await bare.api('GET', '/conversations?channel=web', { key: d.key })).body.items).toEqual([])
  })
})
