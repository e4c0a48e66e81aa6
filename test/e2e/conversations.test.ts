import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { conversationsFeature } from '../../src/features/conversations'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let agent: string

const advance = (ms: number) => s.console('POST', '/clock/advance', { ms })
const now = async () => (await s.console('GET', '/clock')).body.now as string
const say = async (message: string, session?: string) => {
  await advance(2000)
  const r = await s.api('POST', `/agents/${agent}/test-chat`, { key: dev.key, body: session ? { message, session } : { message } })
  if (r.status !== 200) throw new Error(`test chat: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.session as string
}

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer()
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Inbox' } })).body.id
})
afterAll(() => s.stop())

describe('GET /conversations/{id}/messages', () => {
  test('pages newest first with cursors; since keeps later messages; notes are never shown', async () => {
    const session = await say('first question')
    await say('second question', session)
    const midway = await now()
    await say('third question', session)
    const conversation = await s.server.services.of(conversationsFeature).conversations.find(session)
    await s.server.services.of(conversationsFeature).conversations.addMessage(conversation!, { author: 'teammate', parts: [{ type: 'text', text: 'internal: VIP' }], internal: true })

    const page1 = await s.api('GET', `/conversations/${session}/messages?limit=4`, { key: dev.key })
    expect(page1.status).toBe(200)
    expect(page1.body.items).toHaveLength(4)
    expect(page1.body.items.map((m: any) => m.author)).toEqual(['agent', 'customer', 'agent', 'customer'])
    expect(page1.body.items[1].parts).toEqual([{ type: 'text', text: 'third question' }])
    expect(Object.keys(page1.body.items[0]).sort()).toEqual(['author', 'conversationId', 'createdAt', 'id', 'parts'])
    expect(page1.body.nextCursor).toBeString()
    const page2 = await s.api('GET', `/conversations/${session}/messages?limit=4&cursor=${page1.body.nextCursor}`, { key: dev.key })
    expect(page2.body.items.map((m: any) => m.parts[0].text)).toEqual([expect.any(String), 'first question'])
    expect(page2.body.nextCursor).toBeNull()
    const all = [...page1.body.items, ...page2.body.items]
    expect(all.some((m: any) => m.parts[0].text.includes('VIP'))).toBe(false)
    expect(new Set(all.map((m: any) => m.id)).size).toBe(6)

    const since = await s.api('GET', `/conversations/${session}/messages?since=${encodeURIComponent(midway)}`, { key: dev.key })
    expect(since.body.items.map((m: any) => m.author)).toEqual(['agent', 'customer'])
    expect(since.body.items[1].parts[0].text).toBe('third question')
  })

  test('another workspace’s conversation and an unknown id are 404', async () => {
    const session = await say('hello')
    const other = await s.developer()
    expect((await s.api('GET', `/conversations/${session}/messages`, { key: other.key })).status).toBe(404)
    expect((await s.api('GET', '/conversations/conv_unknown/messages', { key: dev.key })).status).toBe(404)
  })

  test('a read key may read', async () => {
    const session = await say('hello')
    const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'reader', scope: 'read' })
    expect((await s.api('GET', `/conversations/${session}/messages`, { key: read.body.key })).status).toBe(200)
    expect((await s.api('GET', '/conversations', { key: read.body.key })).status).toBe(200)
  })
})

describe('GET /conversations', () => {
  test('newest first, paged; since keeps conversations whose customer wrote at or after it', async () => {
    const old = await say('old')
    await advance(60_000)
    const cut = await now()
    const a = await say('a')
    const b = await say('b')
    const list = await s.api('GET', `/conversations?since=${encodeURIComponent(cut)}`, { key: dev.key })
    expect(list.body.items.map((c: any) => c.id)).toEqual([b, a])
    const first = await s.api('GET', '/conversations?limit=1', { key: dev.key })
    expect(first.body.items[0].id).toBe(b)
    const second = await s.api('GET', `/conversations?limit=1&cursor=${first.body.nextCursor}`, { key: dev.key })
    expect(second.body.items[0].id).toBe(a)
    // The old conversation comes back once its customer writes again.
    await say('back again', old)
    const again = await s.api('GET', `/conversations?since=${encodeURIComponent(cut)}`, { key: dev.key })
    expect(again.body.items.map((c: any) => c.id)).toContain(old)
    // A date means the start of that UTC day.
    const day = cut.slice(0, 10)
    expect((await s.api('GET', `/conversations?since=${day}`, { key: dev.key })).status).toBe(200)
  })

  test('only this workspace’s conversations', async () => {
    const other = await s.developer()
    expect((await s.api('GET', '/conversations', { key: other.key })).body).toEqual({ items: [], nextCursor: null })
  })

  test('invalid since, channel, limit or cursor is 400 naming it', async () => {
    const cases: [string, string][] = [
      ['/conversations?since=yesterday', 'since'],
      ['/conversations?since=2026-13-45', 'since'],
      ['/conversations?channel=fax', 'channel'],
      ['/conversations?limit=0', 'limit'],
      ['/conversations?limit=101', 'limit'],
      ['/conversations?cursor=nope', 'cursor'],
    ]
    const session = await say('hello')
    cases.push([`/conversations/${session}/messages?since=soon`, 'since'], [`/conversations/${session}/messages?limit=101`, 'limit'], [`/conversations/${session}/messages?cursor=zzz`, 'cursor'])
    for (const [path, field] of cases) {
      const r = await s.api('GET', path, { key: dev.key })
      expect({ path, status: r.status, field: r.body.field }).toEqual({ path, status: 400, field })
    }
  })

  test('deleting the agent removes its conversations', async () => {
    const gone = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Temporary' } })).body.id
    await advance(2000)
    const session = (await s.api('POST', `/agents/${gone}/test-chat`, { key: dev.key, body: { message: 'hello' } })).body.session
    expect((await s.api('DELETE', `/agents/${gone}`, { key: dev.key })).status).toBe(204)
    expect((await s.api('GET', `/conversations/${session}/messages`, { key: dev.key })).status).toBe(404)
  })
})
