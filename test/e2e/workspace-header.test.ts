/** docs/spec.md Authentication rules 1, 3 and 5, row by row, plus error shapes of the kernel. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { iso } from '../../src/clock'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }
let customer: string
beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer()
  customer = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })).body.id
})
afterAll(() => s.stop())

describe('bearer key (rule 1)', () => {
  test('missing, malformed, wrong → 401 with a v1 error body', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer sk_nope' }]) {
      const r = await s.api('GET', '/agents', { headers })
      expect(r.status).toBe(401)
      expect(r.body.error).toBeString()
    }
  })
  test('a request id is echoed on answers and errors', async () => {
    const ok = await s.api('GET', '/agents', { key: dev.key })
    expect(ok.headers.get('x-request-id')).toMatch(/^req_/)
    const bad = await s.api('GET', '/agents', { headers: { 'x-request-id': 'trace-12345678' } })
    expect(bad.headers.get('x-request-id')).toBe('trace-12345678')
  })
  test('401 comes before body validation', async () => {
    const r = await s.api('POST', '/agents', { body: { bogus: 1 } })
    expect(r.status).toBe(401)
  })
})

describe('Service-Workspace (rule 3)', () => {
  test('absent or own id → own workspace', async () => {
    const own = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Mine' } })
    const viaHeader = await s.api('GET', `/agents/${own.body.id}`, { key: dev.key, workspace: dev.id })
    expect(viaHeader.status).toBe(200)
  })
  test('a customer → that customer; its data stays there', async () => {
    const a = await s.api('POST', '/agents', { key: dev.key, workspace: customer, body: { name: 'Theirs' } })
    expect(a.status).toBe(201)
    expect((await s.api('GET', `/agents/${a.body.id}`, { key: dev.key })).status).toBe(404)
    expect((await s.api('GET', `/agents/${a.body.id}`, { key: dev.key, workspace: customer })).status).toBe(200)
  })
  test('another developer’s customer or an unknown id → 404 naming the workspace', async () => {
    const other = await s.developer()
    const theirs = (await s.api('POST', '/customers', { key: other.key, body: { name: 'Other' } })).body.id
    for (const id of [theirs, 'org_unknown', other.id]) {
      const r = await s.api('GET', '/agents', { key: dev.key, workspace: id })
      expect(r.status).toBe(404)
      expect(r.body.error).toContain('workspace')
    }
  })
  test('a deleted customer → 410 with deletion and erasure times', async () => {
    const c = (await s.api('POST', '/customers', { key: dev.key, body: { name: 'Gone' } })).body.id
    // The lifecycle machine (DELETE) sets these; here the resolver's row is checked on its own.
    const now = s.server.services.clock.now()
    const repo = await s.server.services.store.collection<any>({ name: 'workspaces', indexes: [] })
    await repo.update(c, { status: 'deleted', archivedAt: iso(now), eraseAfter: iso(now + 30 * 86400_000) })
    const r = await s.api('GET', '/agents', { key: dev.key, workspace: c })
    expect(r.status).toBe(410)
    expect(r.body.deletedAt).toBe(iso(now))
    expect(r.body.eraseAfter).toBe(iso(now + 30 * 86400_000))
    expect(r.body.error).toContain(c)
  })
  test('any value from a workspace with no customers → 400', async () => {
    const lonely = await s.developer()
    const r = await s.api('GET', '/agents', { key: lonely.key, workspace: 'org_x' })
    expect(r.status).toBe(400)
    expect(r.body.error).toStartWith('Service-Workspace:')
    expect((await s.api('GET', '/agents', { key: lonely.key, workspace: lonely.id })).status).toBe(200)
  })
  test('the key’s scope applies inside the customer too', async () => {
    const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'r', scope: 'read' })
    expect((await s.api('GET', '/agents', { key: read.body.key, workspace: customer })).status).toBe(200)
    expect((await s.api('POST', '/agents', { key: read.body.key, workspace: customer, body: { name: 'No' } })).status).toBe(403)
  })
})

describe('error shapes', () => {
  test('unknown v1 route → 404 { error }; unknown legacy route → 404 { detail, status }', async () => {
    const v1 = await s.api('GET', '/nothing-here', { key: dev.key })
    expect(v1.status).toBe(404)
    expect(v1.body.error).toBeString()
    const legacy = await fetch(`${s.url}/nothing-here`)
    expect(legacy.status).toBe(404)
    expect(await legacy.json()).toMatchObject({ status: 404, detail: expect.any(String) })
  })
  test('malformed JSON → 400 naming the body', async () => {
    const r = await s.api('POST', '/agents', { key: dev.key, raw: '{"name": "x",' })
    expect(r.status).toBe(400)
    expect(r.body.error).toStartWith('body:')
  })
})

describe('query validation names the member', () => {
  test('an out-of-range or non-numeric integer in the query', async () => {
    const zero = await s.api('GET', '/agents?limit=0', { key: dev.key })
    expect(zero.status).toBe(400)
    expect(zero.body.error).toBe('limit: must be from 1 to 100')
    const big = await s.api('GET', '/customers?limit=500&archived=true', { key: dev.key })
    expect(big.body.error).toBe('limit: must be from 1 to 100')
    const text = await s.api('GET', '/agents?limit=many', { key: dev.key })
    expect(text.status).toBe(400)
    expect(text.body.error).toStartWith('limit:')
  })
})

describe('bodies are JSON (SPEC Conventions rule 1)', () => {
  test('a form-encoded or text body is refused naming the body; nothing is created', async () => {
    const before = (await s.api('GET', '/agents?limit=100', { key: dev.key })).body.items.length
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', 'name=Form'],
      ['text/plain', '{"name":"Texty"}'],
    ]) {
      const res = await fetch(`${s.url}/api/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': type }, body })
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error).toStartWith('body: must be JSON')
    }
    expect((await s.api('GET', '/agents?limit=100', { key: dev.key })).body.items.length).toBe(before)
    // JSON with a charset parameter is fine.
    const ok = await fetch(`${s.url}/api/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json; charset=utf-8' }, body: '{"name":"Charset"}' })
    expect(ok.status).toBe(201)
  })
})

test('a JSON body that is not an object is refused: 400 on v1 (also for an all-optional PATCH), 422 on legacy', async () => {
  const a = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Objecty' } })).body
  for (const raw of ['[]', '5', 'true', '"x"']) {
    const create = await s.api('POST', '/agents', { key: dev.key, raw })
    expect({ raw, status: create.status, error: create.body.error }).toEqual({ raw, status: 400, error: 'body: must be an object' })
    const patch = await s.api('PATCH', `/agents/${a.id}`, { key: dev.key, raw })
    expect({ raw, status: patch.status }).toEqual({ raw, status: 400 })
  }
  const legacy = await fetch(`${s.url}/agents/${a.id}/publish`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: '[]' })
  expect(legacy.status).toBe(422)
  expect(((await legacy.json()) as any).detail[0].loc).toEqual(['body'])
})

test('malformed JSON: 401 without a valid key, 403 for a read key, and only then 400 (422 legacy)', async () => {
  const post = (path: string, key?: string) =>
    fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: '{bad' })
  expect((await post('/api/v1/agents')).status).toBe(401)
  expect((await post('/api/v1/agents', 'sk_wrong')).status).toBe(401)
  const read = await s.console('POST', `/workspaces/${dev.id}/keys`, { name: 'ro', scope: 'read' })
  expect((await post('/api/v1/agents', read.body.key)).status).toBe(403)
  expect((await post('/api/v1/agents', dev.key)).status).toBe(400)
  expect((await post('/webhooks/endpoints')).status).toBe(401)
  expect((await post('/webhooks/endpoints', dev.key)).status).toBe(422)
  expect((await post('/console/workspaces')).status).toBe(401)
})

test('a nullable number out of range names its range, not "must be null"', async () => {
  const c = await s.api('POST', '/customers', { key: dev.key, body: { name: 'Nullable' } })
  const r = await s.api('PATCH', `/customers/${c.body.id}`, { key: dev.key, body: { allottedCallLines: -1 } })
  expect(r.body.error).toBe('allottedCallLines: must be from 0 to 10000')
  const a = await s.api('POST', '/agents', { key: dev.key, body: { name: 'Short', voice: { maxCallSeconds: 30 } } })
  expect(a.body.error).toBe('voice.maxCallSeconds: must be from 60 to 1200')
})

test('a body over 2 MiB is refused with 413 before it is read; a 200,000-character knowledge text fits', async () => {
  const big = JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) })
  const res = await fetch(`${s.url}/api/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }, body: big })
  expect(res.status).toBe(413)
  // A proper answer: the surface's error shape and the request id, like every other answer.
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(await res.json()).toEqual({ error: 'body: is larger than 2 MiB, the most a request body may be', field: 'body' })
  const agent = (await s.api('POST', '/agents', { key: dev.key, body: { name: 'Reader' } })).body.id
  // Worst case for size: characters that take 3 bytes in UTF-8.
  const text = 'é€'.repeat(100_000)
  const ok = await s.api('POST', `/agents/${agent}/knowledge`, { key: dev.key, body: { text } })
  expect(ok.status).toBe(201)
})

test('too large is a proper answer on every surface, declared or chunked', async () => {
  const big = JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) })
  const auth = { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' }
  // Chunked: no Content-Length, the size is only known while reading.
  const chunked = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        const bytes = new TextEncoder().encode(big)
        for (let i = 0; i < bytes.length; i += 256 * 1024) c.enqueue(bytes.subarray(i, i + 256 * 1024))
        c.close()
      },
    })
  const v1 = await fetch(`${s.url}/api/v1/agents`, { method: 'POST', headers: auth, body: chunked(), duplex: 'half' } as RequestInit)
  expect(v1.status).toBe(413)
  expect(v1.headers.get('x-request-id')).toBeTruthy()
  expect((await v1.json()).field).toBe('body')
  const legacy = await fetch(`${s.url}/webhooks/endpoints`, { method: 'POST', headers: auth, body: big })
  expect(legacy.status).toBe(413)
  expect(legacy.headers.get('x-request-id')).toBeTruthy()
  expect(await legacy.json()).toMatchObject({ status: 413, detail: expect.stringContaining('2 MiB') })
  const console = await fetch(`${s.url}/console/workspaces`, { method: 'POST', headers: { ...auth, authorization: `Bearer ${s.consoleToken}` }, body: big })
  expect(console.status).toBe(413)
  expect((await console.json()).error).toContain('2 MiB')
  // Credentials first, as for any other complaint about a body.
  const anonymous = await fetch(`${s.url}/api/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big })
  expect(anonymous.status).toBe(401)
})

test('kernel answers carry the request id and the surface shape: unknown routes too', async () => {
  const v1 = await fetch(`${s.url}/api/v1/nothing-here`, { headers: { authorization: `Bearer ${dev.key}` } })
  expect(v1.status).toBe(404)
  expect(v1.headers.get('x-request-id')).toBeTruthy()
  expect(Object.keys(await v1.json())).toEqual(['error'])
  const legacy = await fetch(`${s.url}/nothing-here`, { headers: { authorization: `Bearer ${dev.key}` } })
  expect(legacy.headers.get('x-request-id')).toBeTruthy()
  expect(await legacy.json()).toMatchObject({ status: 404 })
})
