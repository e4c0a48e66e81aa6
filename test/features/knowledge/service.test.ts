import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../src/clock'
import { KnowledgeError, type KnowledgeSearch, MAX_TEXT_CHARS, type Passage, toDocumentResponse } from '../../../src/features/knowledge/model'
import { PASSAGES, SEARCHES } from '../../../src/features/knowledge/repository'
import { KnowledgeService } from '../../../src/features/knowledge/service'
import type { DocumentStore } from '../../../src/store/port'
import { openSqliteStore } from '../../../src/store/sqlite'

const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Delivery

We deliver within 15 kilometres. Delivery costs 3 dollars and is free for orders over 40 dollars.

Refunds

Tell us within 48 hours and we refund you in full. Refunds take 3 to 5 working days to reach your card.`

const dir = mkdtempSync(join(tmpdir(), 'knowledge-service-'))
let store: DocumentStore
let clock: ManualClock
let service: KnowledgeService
let fileNo = 0
const ws = 'ws_one'
const agent = 'ag_one'

async function errorOf(promise: Promise<unknown>): Promise<KnowledgeError> {
  const err = await promise.then(
    () => null,
    (e) => e,
  )
  expect(err).toBeInstanceOf(KnowledgeError)
  return err as KnowledgeError
}

beforeEach(async () => {
  store = await openSqliteStore(join(dir, `k${fileNo++}.db`))
  clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'))
  service = await KnowledgeService.open(store, clock)
})
// Closed before the directory goes: the checkpointer thread would otherwise hold a removed file.
afterEach(() => store.close())

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('addText', () => {
  test('stores a ready document with its passages', async () => {
    const doc = await service.addText({ workspaceId: ws, agentId: agent, text: FAQ, title: 'Shop FAQ' })
    expect(doc).toMatchObject({
      workspaceId: ws,
      agentId: agent,
      title: 'Shop FAQ',
      type: 'text',
      source: 'pasted',
      status: 'ready',
      error: null,
      createdAt: '2026-03-01T10:00:00.000Z',
    })
    expect(doc.id).toMatch(/^doc_[0-9a-z]{20}$/)
    expect(doc.passages).toBe(3)
    const passages = await (await store.collection<Passage>(PASSAGES)).find({ documentId: doc.id }, { sort: [['position', 1]] })
    expect(passages.map((p) => p.position)).toEqual([0, 1, 2])
    expect(passages[0]).toMatchObject({ workspaceId: ws, agentId: agent, title: 'Shop FAQ' })
    expect(passages[0].text.startsWith('Opening hours\n')).toBe(true)
    expect(toDocumentResponse(doc)).toEqual({
      id: doc.id,
      title: 'Shop FAQ',
      type: 'text',
      source: 'pasted',
      status: 'ready',
      error: null,
      createdAt: '2026-03-01T10:00:00.000Z',
      passages: 3,
    })
  })

  test('without a title, the first line becomes one', async () => {
    const doc = await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    expect(doc.title).toBe('Opening hours')
  })

  test(`accepts exactly ${MAX_TEXT_CHARS.toLocaleString('en')} characters and refuses one more, naming text`, async () => {
    const sentence = 'Our bakery uses flour from local mills and bakes every loaf by hand. '
    const full = sentence.repeat(Math.ceil(MAX_TEXT_CHARS / sentence.length)).slice(0, MAX_TEXT_CHARS)
    expect(full.length).toBe(MAX_TEXT_CHARS)
    const doc = await service.addText({ workspaceId: ws, agentId: agent, text: full })
    expect(doc.status).toBe('ready')
    expect(doc.passages).toBeGreaterThan(200)
    const err = await errorOf(service.addText({ workspaceId: ws, agentId: agent, text: `${full}x` }))
    expect(err).toMatchObject({ status: 400, field: 'text' })
    expect(err.message).toContain('200,000')
  })

  test('empty text and an over-long title are refused', async () => {
    expect(await errorOf(service.addText({ workspaceId: ws, agentId: agent, text: '  \n ' }))).toMatchObject({ status: 400, field: 'text' })
    expect(await errorOf(service.addText({ workspaceId: ws, agentId: agent, text: 'x', title: 't'.repeat(201) }))).toMatchObject({ status: 400, field: 'title' })
  })
})

describe('list and remove', () => {
  test('lists newest first, page by page, only for the agent asked', async () => {
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      ids.push((await service.addText({ workspaceId: ws, agentId: agent, text: `Fact number ${i}.` })).id)
      clock.advance(1_000)
    }
    await service.addText({ workspaceId: ws, agentId: 'ag_other', text: 'Not mine.' })
    await service.addText({ workspaceId: 'ws_two', agentId: agent, text: 'Other workspace.' })
    const first = await service.list(ws, agent, { limit: 3 })
    expect(first.items.map((d) => d.id)).toEqual([ids[4], ids[3], ids[2]])
    expect(first.next).toEqual({ createdAt: first.items[2].createdAt, id: ids[2] })
    const second = await service.list(ws, agent, { limit: 3, after: first.next })
    expect(second.items.map((d) => d.id)).toEqual([ids[1], ids[0]])
    expect(second.next).toBeNull()
  })

  test('remove deletes the document and every passage, and search stops finding it', async () => {
    const doc = await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    const keep = await service.addText({ workspaceId: ws, agentId: agent, text: 'Gift cards are valid for two years.' })
    expect((await service.search(ws, agent, 'how much does delivery cost')).found).toBe(true) // index now cached
    await service.remove(ws, agent, doc.id)
    const passages = await store.collection<Passage>(PASSAGES)
    expect(await passages.count({ documentId: doc.id })).toBe(0)
    expect(await passages.count({ documentId: keep.id })).toBe(1)
    expect((await service.list(ws, agent, { limit: 10 })).items.map((d) => d.id)).toEqual([keep.id])
    const after = await service.search(ws, agent, 'how much does delivery cost')
    expect(after.found).toBe(false)
    expect(after.hits.every((h) => h.documentId !== doc.id)).toBe(true)
  })

  test('removing an unknown document, or another workspace’s, is 404', async () => {
    const doc = await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    expect(await errorOf(service.remove(ws, agent, 'doc_missing'))).toMatchObject({ status: 404 })
    expect(await errorOf(service.remove('ws_two', agent, doc.id))).toMatchObject({ status: 404 })
    expect(await errorOf(service.remove(ws, 'ag_other', doc.id))).toMatchObject({ status: 404 })
  })

  test('removeAllForAgent clears documents, passages and the search log of that agent only', async () => {
    await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    await service.addText({ workspaceId: ws, agentId: 'ag_other', text: FAQ })
    await service.search(ws, agent, 'refunds')
    await service.search(ws, 'ag_other', 'refunds')
    await service.removeAllForAgent(ws, agent)
    expect((await service.list(ws, agent, { limit: 10 })).items).toEqual([])
    expect(await (await store.collection<Passage>(PASSAGES)).count({ agentId: agent })).toBe(0)
    expect(await (await store.collection<KnowledgeSearch>(SEARCHES)).count({ agentId: agent })).toBe(0)
    expect((await service.list(ws, 'ag_other', { limit: 10 })).items).toHaveLength(1)
    expect((await service.search(ws, agent, 'refunds')).hits).toEqual([])
    expect((await service.search(ws, 'ag_other', 'refunds')).found).toBe(true)
  })
})

describe('search', () => {
  test('finds the answering passage and logs the search for analytics', async () => {
    await service.addText({ workspaceId: ws, agentId: agent, text: FAQ, title: 'Shop FAQ' })
    clock.advance(60_000)
    const result = await service.search(ws, agent, '  How long do   REFUNDS take? ', 3)
    expect(result.query).toBe('How long do REFUNDS take?')
    expect(result.found).toBe(true)
    expect(result.hits[0].text.startsWith('Refunds\n')).toBe(true)
    expect(result.hits[0].title).toBe('Shop FAQ')
    expect(result.bestSimilarity).toBe(result.hits[0].similarity)

    const missed = await service.search(ws, agent, 'Do you sell birthday balloons?')
    expect(missed.found).toBe(false)

    const log = await (await store.collection<KnowledgeSearch>(SEARCHES)).find({ agentId: agent }, { sort: [['createdAt', 1]] })
    expect(log).toHaveLength(2)
    expect(log[0]).toMatchObject({
      workspaceId: ws,
      agentId: agent,
      query: 'How long do REFUNDS take?',
      queryKey: 'how long do refunds take',
      found: true,
      bestSimilarity: result.bestSimilarity,
      createdAt: '2026-03-01T10:01:00.000Z',
    })
    expect(log[1]).toMatchObject({ query: 'Do you sell birthday balloons?', found: false, bestSimilarity: missed.bestSimilarity })
  })

  test('an agent with no knowledge finds nothing, and that is logged too', async () => {
    const result = await service.search(ws, agent, 'opening hours')
    expect(result).toEqual({ query: 'opening hours', found: false, bestSimilarity: 0, hits: [] })
    expect(await (await store.collection<KnowledgeSearch>(SEARCHES)).count({ agentId: agent, found: false })).toBe(1)
  })

  test('an empty query is refused naming query', async () => {
    expect(await errorOf(service.search(ws, agent, '   '))).toMatchObject({ status: 400, field: 'query' })
  })

  test('documents added after the index is cached are searchable at once', async () => {
    await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    expect((await service.search(ws, agent, 'gift card validity')).found).toBe(false)
    await service.addText({ workspaceId: ws, agentId: agent, text: 'Gift cards are valid for two years.' })
    expect((await service.search(ws, agent, 'gift card validity')).found).toBe(true)
  })

  test('the index is built lazily from the store: a fresh service finds earlier documents', async () => {
    await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    const fresh = await KnowledgeService.open(store, clock)
    expect(fresh.cachedAgents).toBe(0)
    expect((await fresh.search(ws, agent, 'delivery cost')).found).toBe(true)
    expect(fresh.cachedAgents).toBe(1)
  })

  test('concurrent first searches share one build', async () => {
    await service.addText({ workspaceId: ws, agentId: agent, text: FAQ })
    const fresh = await KnowledgeService.open(store, clock)
    const results = await Promise.all(Array.from({ length: 5 }, () => fresh.search(ws, agent, 'delivery cost')))
    expect(results.every((r) => r.found)).toBe(true)
    expect(fresh.cachedAgents).toBe(1)
  })

  test('the cache keeps a bounded number of agents, least recently used out first', async () => {
    const small = await KnowledgeService.open(store, clock, { maxCachedAgents: 2 })
    for (const a of ['ag_a', 'ag_b', 'ag_c']) await small.addText({ workspaceId: ws, agentId: a, text: FAQ })
    await small.search(ws, 'ag_a', 'refunds')
    await small.search(ws, 'ag_b', 'refunds')
    await small.search(ws, 'ag_c', 'refunds')
    expect(small.cachedAgents).toBe(2)
    // Evicted agents rebuild from the store on their next search.
    expect((await small.search(ws, 'ag_a', 'refunds')).found).toBe(true)
  })

  test('the cache is also bounded by the text it holds', async () => {
    const small = await KnowledgeService.open(store, clock, { maxCachedChars: FAQ.length + 50 })
    for (const a of ['ag_a', 'ag_b']) await small.addText({ workspaceId: ws, agentId: a, text: FAQ })
    await small.search(ws, 'ag_a', 'refunds')
    await small.search(ws, 'ag_b', 'refunds')
    expect(small.cachedAgents).toBe(1)
  })
})

describe('addUrl', () => {
  let server: ReturnType<typeof Bun.serve>
  let base: string
  const pages: Record<string, () => Response> = {
    '/faq': () =>
      new Response(
        `<html><head><title>Sunrise FAQ</title></head><body><nav>Home</nav><h1>FAQ</h1><h2>Delivery</h2><p>We deliver within 15 kilometres. Delivery costs 3 dollars and is free for orders over 40 dollars.</p></body></html>`,
        { headers: { 'content-type': 'text/html; charset=utf-8' } },
      ),
    '/blocked': () => new Response('<h1>Access denied</h1>', { status: 403, headers: { 'content-type': 'text/html' } }),
    '/spa': () =>
      new Response('<html><head><script src="/main.js"></script></head><body><div id="root"></div></body></html>', {
        headers: { 'content-type': 'text/html' },
      }),
    '/loop': () => new Response(null, { status: 302, headers: { location: '/loop' } }),
  }

  beforeAll(() => {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => (pages[new URL(req.url).pathname] ?? (() => new Response('missing', { status: 404 })))(),
    })
    base = `http://127.0.0.1:${server.port}`
  })
  afterAll(() => server.stop(true))

  const open = () => KnowledgeService.open(store, clock, { allowPrivate: true })

  test('fetches, indexes and titles a page before answering', async () => {
    const svc = await open()
    const doc = await svc.addUrl({ workspaceId: ws, agentId: agent, url: `${base}/faq` })
    expect(doc).toMatchObject({ type: 'url', source: `${base}/faq`, status: 'ready', error: null, title: 'Sunrise FAQ' })
    expect(doc.passages).toBe(2)
    const found = await svc.search(ws, agent, 'how much is delivery')
    expect(found.found).toBe(true)
    expect(found.hits[0].text).not.toContain('Home')
  })

  test('a refusal is kept as a failed document naming the status', async () => {
    const svc = await open()
    const doc = await svc.addUrl({ workspaceId: ws, agentId: agent, url: `${base}/blocked` })
    expect(doc).toMatchObject({ status: 'failed', passages: 0, title: `127.0.0.1:${server.port}/blocked` })
    expect(doc.error).toContain('HTTP 403')
    expect((await svc.list(ws, agent, { limit: 5 })).items.map((d) => d.id)).toEqual([doc.id])
  })

  test('a page that needs JavaScript is kept as failed', async () => {
    const doc = await (await open()).addUrl({ workspaceId: ws, agentId: agent, url: `${base}/spa` })
    expect(doc).toMatchObject({ status: 'failed', error: expect.stringContaining('needs JavaScript') })
  })

  test('redirect loops fail the document', async () => {
    const doc = await (await open()).addUrl({ workspaceId: ws, agentId: agent, url: `${base}/loop` })
    expect(doc).toMatchObject({ status: 'failed', error: 'the page redirected too many times' })
  })

  test('without allowPrivate, a private address fails without naming it', async () => {
    const doc = await service.addUrl({ workspaceId: ws, agentId: agent, url: `${base}/faq` })
    expect(doc.status).toBe('failed')
    expect(doc.error).toContain('private network')
    expect(doc.error).not.toContain('127.0.0.1')
  })

  test('a malformed or non-web URL is a validation error naming url', async () => {
    for (const url of ['not a url', 'ftp://example.com/file', '', `https://example.com/${'a'.repeat(2_100)}`]) {
      expect(await errorOf(service.addUrl({ workspaceId: ws, agentId: agent, url }))).toMatchObject({ status: 400, field: 'url' })
    }
  })
})
