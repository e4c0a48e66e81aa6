/**
 * The version a conversation runs on, as the console shows it: each agent reply records the
 * published version that wrote it, so an open web chat's replies before and after a publish name
 * different versions; test chat talks to the draft and names none.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'
import { readEvents } from '../support/sse'

let s: TestServer
let dev: { id: string; key: string }
let agent: { id: string; webKey: string }

// Publishing is on the legacy surface (docs/spec.md), outside /api/v1.
const publish = async () => {
  const r = await fetch(`${s.url}/agents/${agent.id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '{}' })
  expect(r.status).toBe(200)
}
const web = (path: string, body: unknown) =>
  fetch(`${s.url}/api/v1/web/${agent.webKey}/${path}`, { method: 'POST', headers: { origin: 'http://shop.example', 'content-type': 'application/json' }, body: JSON.stringify(body) })
const say = async (session: string, message: string) => {
  // One message a second per visitor, on the service clock.
  await s.console('POST', '/clock/advance', { ms: 2_000 })
  const res = await web('messages', { session, message })
  expect(res.status).toBe(200)
  await readEvents(res)
}
const messages = async (conversationId: string) => {
  const r = await s.console('GET', `/workspaces/${dev.id}/conversations/${conversationId}/messages`)
  expect(r.status).toBe(200)
  return (r.body.items as any[]).reverse()
}

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer({ plan: 'scale' })
  const made = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Bean There', instructions: 'Version one.' } })
  expect(made.status).toBe(201)
  agent = { id: made.body.id, webKey: made.body.webKey }
})
afterAll(() => s?.stop())

test('an open web chat: the reply before a publish names v1, the one after names v2', async () => {
  await publish()
  const session = (await (await web('sessions', {})).json()).session as string
  await say(session, 'Are you open today?')
  // An edit drops the widget's cached agent in this process, so the next message reads v2 at once.
  expect((await s.api('PATCH', `/agents/${agent.id}`, { key: dev.key, body: { instructions: 'Version two.' } })).status).toBe(200)
  await publish()
  await say(session, 'And tomorrow?')

  const conversations = await s.console('GET', `/workspaces/${dev.id}/conversations?channel=web`)
  const [conversation] = conversations.body.items as any[]
  const thread = await messages(conversation.id)
  expect(thread.map((m) => [m.author, m.agentVersion])).toEqual([
    ['customer', undefined],
    ['agent', 1],
    ['customer', undefined],
    ['agent', 2],
  ])
  // The v1 API's message keeps its documented shape.
  const v1 = await s.api('GET', `/conversations/${conversation.id}/messages`, { key: dev.key })
  expect(v1.status).toBe(200)
  expect(v1.body.items.every((m: any) => !('agentVersion' in m))).toBe(true)
  // The agent as stored stays the draft: the served version number is never written back.
  const stored = await s.server.services.store.collection<{ id: string; servedVersion?: number }>({ name: 'agents', indexes: [] })
  expect(await stored.get(agent.id)).not.toHaveProperty('servedVersion')
})

test('test chat talks to the draft: its reply names no version', async () => {
  const r = await s.api('POST', `/agents/${agent.id}/test-chat`, { key: dev.key, body: { message: 'Hello there' } })
  expect(r.status).toBe(200)
  const thread = await messages(r.body.session)
  expect(thread.find((m) => m.author === 'agent')).toMatchObject({ agentVersion: null })
})
