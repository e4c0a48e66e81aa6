import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { knowledgeFeature } from '../../src/features/knowledge'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let open: TestServer
let dev: { id: string; key: string }
let agent: string
let site: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  s = await startTestServer()
  // A second server that may fetch loopback pages (ALLOW_PRIVATE_WEBHOOK_TARGETS), to reach a local site.
  open = await startTestServer({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' })
  dev = await s.developer()
  agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Librarian' } })).body.id
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/faq') {
        return new Response(
          '<html><head><title>Bakery FAQ</title></head><body><h1>FAQ</h1><p>We open at 7 am every day and close at 6 pm.</p><p>Sourdough is baked fresh each morning.</p></body></html>',
          { headers: { 'content-type': 'text/html' } },
        )
      }
      if (path === '/spa') {
        return new Response('<html><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript><script src="/app.js"></script></body></html>', {
          headers: { 'content-type': 'text/html' },
        })
      }
      return new Response('forbidden', { status: 403 })
    },
  })
})
afterAll(async () => {
  site.stop(true)
  await s.stop()
  await open.stop()
})

describe('pasted text', () => {
  test('201 ready with passages; listed newest first; deleted with every passage', async () => {
    const a = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Our returns window is 30 days from delivery.', title: 'Returns' } })
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ title: 'Returns', type: 'text', source: 'pasted', status: 'ready', error: null })
    expect(a.body.passages).toBe(1) // one short sentence
    const b = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'Shipping takes 3 to 5 working days.' } })
    const list = await s.api('GET', `/agents/${agent}/knowledge`, { key: dev.key })
    expect(list.body.items.map((d: any) => d.id)).toEqual([b.body.id, a.body.id])
    const found = await s.server.services.of(knowledgeFeature).knowledge.search(dev.id, agent, 'how long is the returns window?')
    expect(found.found).toBe(true)
    expect((await s.api('DELETE', `/agents/${agent}/knowledge/${a.body.id}`, { key: dev.key })).status).toBe(204)
    const after = await s.server.services.of(knowledgeFeature).knowledge.search(dev.id, agent, 'how long is the returns window?')
    expect(after.hits.some((h: any) => h.documentId === a.body.id)).toBe(false)
    expect((await s.api('DELETE', `/agents/${agent}/knowledge/${a.body.id}`, { key: dev.key })).status).toBe(404)
  })

  test('rules: 200,000 characters; exactly one of url or text; title only with text', async () => {
    const long = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text: 'x'.repeat(200_001) } })
    expect(long.status).toBe(400)
    expect(long.body.error).toStartWith('text:')
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: {} })).status).toBe(400)
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: 'https://example.com', text: 'x' } })).status).toBe(400)
    expect((await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: 'https://example.com', title: 't' } })).body.error).toStartWith('title:')
    expect((await s.api('POST', `/agents/ag_nope/knowledge`, { key: dev.key, body: { text: 'x' } })).status).toBe(404)
  })
})

describe('URLs', () => {
  test('internal addresses are refused', async () => {
    const r = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: `http://127.0.0.1:${site.port}/faq` } })
    // Recorded as a failed document (like any page we could not read), never fetched.
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ status: 'failed', passages: 0 })
    expect(r.body.error).toContain('private network')
    const meta = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { url: 'http://169.254.169.254/latest/meta-data/' } })
    expect(meta.body).toMatchObject({ status: 'failed', passages: 0 })
  })

  test('a page is fetched and indexed before the answer; scripting-only and refusing pages are failed', async () => {
    const ws = await open.developer()
    const ag = (await open.api('POST', '/agents', { key: ws.key, body: { name: 'Baker' } })).body.id
    const ok = await open.api('POST', `/agents/${ag}/knowledge`, { key: ws.key, body: { url: `http://127.0.0.1:${site.port}/faq` } })
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({ type: 'url', status: 'ready', title: 'Bakery FAQ', source: `http://127.0.0.1:${site.port}/faq` })
    const hit = await open.server.services.of(knowledgeFeature).knowledge.search(ws.id, ag, 'what time do you open?')
    expect(hit.hits[0].text).toContain('7 am')
    const spa = await open.api('POST', `/agents/${ag}/knowledge`, { key: ws.key, body: { url: `http://127.0.0.1:${site.port}/spa` } })
    expect(spa.body.status).toBe('failed')
    expect(spa.body.error).toContain('JavaScript')
    const wall = await open.api('POST', `/agents/${ag}/knowledge`, { key: ws.key, body: { url: `http://127.0.0.1:${site.port}/private` } })
    expect(wall.body.status).toBe('failed')
    expect(wall.body.error).toContain('403')
  })
})

test('deleting the agent removes its knowledge', async () => {
  const ag = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Temp' } })).body.id
  await s.api('POST', `/agents/${ag}/knowledge`, { key: dev.key, body: { text: 'The secret word is marmalade.' } })
  await s.api('DELETE', `/agents/${ag}`, { key: dev.key })
  const docs = await s.server.services.store.collection<any>({ name: 'knowledge_documents', indexes: [] })
  expect(await docs.count({ agentId: ag })).toBe(0)
})
