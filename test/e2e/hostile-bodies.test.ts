/**
 * Hostile JSON bodies against the real server: nested hundreds of thousands deep, wide enough to
 * make an error message huge, or carrying NUL and lone surrogates. Each is a 400 naming the member
 * (legacy 422 with its loc), or the 401 a caller without credentials gets before the body is read,
 * and a /health sent meanwhile is answered. The client gives up after 10 s, far above what these
 * take; before the depth bound, the first one took minutes and the health check waited for it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { MAX_BODY_DEPTH, MAX_BODY_MEMBERS, MAX_OBJECT_MEMBERS } from '../../src/http/body-shape'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let key: string

beforeAll(async () => {
  s = await startTestServer()
  key = (await s.developer()).key
})
afterAll(() => s?.stop())

const CLIENT_TIMEOUT_MS = 10_000

const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`

async function post(path: string, raw: string, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (authorization) headers.authorization = authorization
  const r = await fetch(`${s.url}${path}`, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
  return { status: r.status, body: (await r.json()) as any }
}

const health = () => fetch(`${s.url}/health`, { signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) }).then((r) => r.status)

/** The field name a path of `levels` members `a` reads as: `a.a.a…`. */
const chain = (levels: number) => Array.from({ length: levels }, () => 'a').join('.')

test('300,000 levels without credentials: 401 before the body is read, on every surface; /health answered meanwhile', async () => {
  const body = deepObject(300_000)
  const [v1, legacy, consoleAnswer, healthy] = await Promise.all([
    post('/api/v1/agents', body),
    post('/agents/ag_x/publish', body, 'Bearer sk_wrong'),
    post('/console/workspaces', body, 'Bearer not-the-token'),
    health(),
  ])
  expect(v1.status).toBe(401)
  expect(v1.body.error).toContain('API key')
  expect(legacy).toMatchObject({ status: 401, body: { status: 401 } })
  expect(consoleAnswer.status).toBe(401)
  expect(healthy).toBe(200)
})

test('too deep with credentials: 400 naming where, before any schema, on v1, legacy and the console', async () => {
  const body = deepObject(100_000)
  const [v1, legacy, consoleAnswer, healthy] = await Promise.all([
    post('/api/v1/agents', body, `Bearer ${key}`),
    post('/agents/ag_x/publish', body, `Bearer ${key}`),
    post('/console/workspaces', body, `Bearer ${s.consoleToken}`),
    health(),
  ])
  expect(v1.status).toBe(400)
  expect(v1.body.field).toBe(chain(MAX_BODY_DEPTH))
  expect(v1.body.error).toContain(`deeper than ${MAX_BODY_DEPTH} levels`)
  expect(legacy.status).toBe(422)
  expect(legacy.body.detail[0].loc).toEqual(['body', ...Array.from({ length: MAX_BODY_DEPTH }, () => 'a')])
  expect(consoleAnswer.body.field).toBe(chain(MAX_BODY_DEPTH))
  expect(healthy).toBe(200)
  // At the limit a body is read as usual (and refused by its schema: no name), one more level is not.
  const atLimit = await post('/api/v1/agents', deepObject(MAX_BODY_DEPTH), `Bearer ${key}`)
  expect(atLimit).toMatchObject({ status: 400, body: { field: 'name', error: 'name: is required' } })
  const past = await post('/api/v1/agents', deepObject(MAX_BODY_DEPTH + 1), `Bearer ${key}`)
  expect(past).toMatchObject({ status: 400, body: { field: chain(MAX_BODY_DEPTH) } })
})

test('the visitor API, which takes no key: a 10,000-level body (60 KB, within its limit) is a 400, not an out-of-memory 500', async () => {
  const r = await post('/api/v1/web/wk_nonexistent00000000/sessions', deepObject(10_000))
  expect(r.status).toBe(400)
  expect(r.body.field).toBe(chain(MAX_BODY_DEPTH))
})

test('every route with a body: a 10,000-deep array in its first field is a 400 naming that field', async () => {
  const routes = (s.server.app.routes as { method: string; path: string; hooks?: { body?: { properties?: Record<string, unknown> } } }[]).filter(
    (r) => Object.keys(r.hooks?.body?.properties ?? {}).length > 0 && ['POST', 'PUT', 'PATCH'].includes(r.method),
  )
  expect(routes.length).toBeGreaterThan(30)
  const wrong: unknown[] = []
  for (const r of routes) {
    const field = Object.keys(r.hooks!.body!.properties!)[0]!
    const legacy = !r.path.startsWith('/api/v1') && !r.path.startsWith('/console')
    const auth = r.path.startsWith('/console') ? `Bearer ${s.consoleToken}` : `Bearer ${key}`
    const path = r.path.replace(/:[A-Za-z_]+/g, 'x1')
    const answer = await fetch(`${s.url}${path}`, {
      method: r.method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: `{${JSON.stringify(field)}:${deepArray(10_000)}}`,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }))
    const ok = legacy ? answer.status === 422 && answer.body.detail?.[0]?.loc?.[1] === field : answer.status === 400 && String(answer.body.field).startsWith(`${field}[0]`)
    if (!ok) wrong.push({ route: `${r.method} ${r.path}`, field, status: answer.status, body: JSON.stringify(answer.body).slice(0, 200) })
  }
  expect(wrong).toEqual([])
})

test('a wide body that fails its schema is refused naming the field, and /health is answered meanwhile', async () => {
  // 200,000 items nested 60 deep: Elysia's own error message for it ran to gigabytes.
  const wide = `{"name":${'['.repeat(60)}${'0,'.repeat(200_000)}0${']'.repeat(60)}}`
  const [r, healthy] = await Promise.all([post('/api/v1/customers', wide, `Bearer ${key}`), health()])
  expect(r).toMatchObject({ status: 400, body: { field: 'name', error: 'name: must be a string' } })
  expect(healthy).toBe(200)
  const extra = await post('/api/v1/customers', `{"name":"Wide","zz":[${'{},'.repeat(100_000)}{}]}`, `Bearer ${key}`)
  expect(extra).toMatchObject({ status: 400, body: { field: 'zz' } })
})

/** An object of `n` members `k0`…: 150,000 of them is ~1.7 MB. */
const wideObject = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`

test('too many members in one object or in all: 400 naming the member one too many, on v1, legacy and the console; /health answered meanwhile', async () => {
  const wide = wideObject(150_000)
  const [v1, legacy, consoleAnswer, healthy] = await Promise.all([
    post('/api/v1/agents', wide, `Bearer ${key}`),
    post('/agents/ag_x/publish', wide, `Bearer ${key}`),
    post('/console/workspaces', wide, `Bearer ${s.consoleToken}`),
    health(),
  ])
  const past = `k${MAX_OBJECT_MEMBERS}`
  expect(v1).toMatchObject({ status: 400, body: { field: past } })
  expect(v1.body.error).toContain(`at most ${MAX_OBJECT_MEMBERS}`)
  expect(legacy.status).toBe(422)
  expect(legacy.body.detail[0].loc).toEqual(['body', past])
  expect(consoleAnswer.body.field).toBe(past)
  expect(healthy).toBe(200)
  // In all: many small objects, each within the bound, past the body's.
  const many = `{"name":"Ava","steps":[${Array.from({ length: MAX_BODY_MEMBERS }, () => '{"title":"t"}').join(',')}]}`
  const total = await post('/api/v1/agents', many, `Bearer ${key}`)
  expect(total).toMatchObject({ status: 400, body: { field: `steps[${MAX_BODY_MEMBERS - 2}].title` } })
  expect(total.body.error).toContain(`at most ${MAX_BODY_MEMBERS} in all`)
  // At the bound an object is read as usual (and refused by its schema, naming its first unknown field).
  const atBound = await post('/api/v1/customers', wideObject(MAX_OBJECT_MEMBERS), `Bearer ${key}`)
  expect(atBound.status).toBe(400)
  expect(atBound.body.error).not.toContain('at most')
})

test('the visitor API, which takes no key: a wide body within its size limit is a 400 naming the member', async () => {
  // 5,000 members is ~44 KB, under the visitor API's 64 KiB.
  const r = await post('/api/v1/web/wk_nonexistent00000000/sessions', wideObject(5_000))
  expect(r).toMatchObject({ status: 400, body: { field: `k${MAX_OBJECT_MEMBERS}` } })
})

test('NUL and lone surrogates are refused naming the field; a proper pair is kept', async () => {
  const nul = await post('/api/v1/customers', '{"name":"a\\u0000b"}', `Bearer ${key}`)
  expect(nul).toMatchObject({ status: 400, body: { field: 'name' } })
  expect(nul.body.error).toContain('NUL')
  const lone = await post('/api/v1/agents', '{"name":"Ava","greeting":"x\\ud800y"}', `Bearer ${key}`)
  expect(lone).toMatchObject({ status: 400, body: { field: 'greeting' } })
  expect(lone.body.error).toContain('surrogate')
  const low = await post('/api/v1/agents', '{"name":"Ava","greeting":"x\\udc00"}', `Bearer ${key}`)
  expect(low.body.field).toBe('greeting')
  const inKey = await post('/api/v1/agents', '{"name":"Ava","\\u0000":1}', `Bearer ${key}`)
  expect(inKey).toMatchObject({ status: 400, body: { field: '\u0000' } })
  const template = await fetch(`${s.url}/console/workspaces/ws_x/templates`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.consoleToken}`, 'content-type': 'application/json' },
    body: '{"name":"t","language":"x\\ud800y"}',
  })
  expect(template.status).toBe(400)
  expect(((await template.json()) as any).field).toBe('language')
  const legacy = await post('/agents/ag_x/publish', '{"summary":"a\\u0000"}', `Bearer ${key}`)
  expect(legacy.status).toBe(422)
  expect(legacy.body.detail[0].loc).toEqual(['body', 'summary'])
  // An emoji is a surrogate pair, stored as sent.
  const emoji = await s.api('POST', '/agents', { key, body: { name: 'Ava 🎉' } })
  expect(emoji.status).toBe(201)
  expect(emoji.body.name).toBe('Ava 🎉')
})
