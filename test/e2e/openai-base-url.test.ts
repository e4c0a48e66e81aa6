/** OPENAI_BASE_URL: the service's own OpenAI-protocol models go to that server (here a local fake). */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeOpenAI, startOpenAIFake } from '../fakes/openai'
import { startTestServer, type TestServer } from '../support/server'
import { until } from '../support/until'

const KEY = 'sk-base-url-test-0123456789'
let fake: FakeOpenAI
let s: TestServer
beforeAll(async () => {
  fake = startOpenAIFake({ apiKey: KEY })
  s = await startTestServer({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl })
})
afterAll(async () => {
  await s?.stop()
  await fake?.stop()
})

test('a test chat on gpt-4o-mini is answered by the server at OPENAI_BASE_URL', async () => {
  const dev = await s.developer({ plan: 'scale' })
  const agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Relay', model: 'gpt-4o-mini' } })).body.id
  fake.reply({ kind: 'stream', text: ['Hello from the configured server.'] })
  const r = await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: { message: 'Hi' } })
  expect(r.status).toBe(200)
  expect(r.body.reply).toBe('Hello from the configured server.')
  expect(fake.requests).toHaveLength(1)
  expect(fake.requests[0]).toMatchObject({ path: '/v1/chat/completions', headers: { authorization: `Bearer ${KEY}` }, body: { model: 'gpt-4o-mini' } })
})

test('an agent deleted during the model call: the turn answers 404 and leaves no conversation behind', async () => {
  const dev = await s.developer({ plan: 'scale' })
  const agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Doomed', model: 'gpt-4o-mini' } })).body.id
  // The reply stalls after its first frame until woken: the delete lands inside the model call.
  fake.reply({ kind: 'stream', text: ['Still ', 'here?'], stall: { afterFrames: 1, ms: 60_000 } })
  const chat = s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: { message: 'Hi' } })
  await until(
    'the model call to stall',
    async () => fake.stalled(),
    (n) => n === 1,
  )
  expect((await s.api('DELETE', `/agents/${agent}`, { key: dev.key })).status).toBe(204)
  fake.wake()
  expect((await chat).status).toBe(404)
  const left = await Promise.all(['conversations', 'messages'].map(async (name) => (await s.server.services.store.collection<any>({ name, indexes: [] })).count({ agentId: agent })))
  expect(left).toEqual([0, 0])
})
