/**
 * `__proto__` in a JSON body is refused the same way on every route that takes a body, at any
 * depth: 400 naming it on v1 and the console, 422 with its loc on legacy. Routes are read from the
 * app, so a route added later is covered without editing this file.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let key: string

beforeAll(async () => {
  s = await startTestServer()
  key = (await s.developer()).key
})
afterAll(() => s?.stop())

const concrete = (path: string) => path.replace(/:[A-Za-z_]+/g, (p) => (p.endsWith('_id') || p === ':vid' || p === ':vid_b' ? '1' : 'x1'))

function send(method: string, path: string, raw: string) {
  const url = `${s.url}${concrete(path)}`
  const auth = path.startsWith('/console') ? `Bearer ${s.consoleToken}` : `Bearer ${key}`
  return fetch(url, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: raw }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
}

test('every route with a body refuses __proto__, at the top and nested', async () => {
  const routes = (s.server.app.routes as { method: string; path: string; hooks?: { body?: unknown } }[]).filter((r) => r.hooks?.body && ['POST', 'PUT', 'PATCH'].includes(r.method))
  expect(routes.length).toBeGreaterThan(15)
  const wrong: unknown[] = []
  for (const r of routes) {
    const legacy = !r.path.startsWith('/api/v1') && !r.path.startsWith('/console')
    for (const [raw, path] of [
      ['{"__proto__":{"admin":true}}', ['__proto__']],
      ['{"name":"A","widget":{"__proto__":{"x":1}}}', ['widget', '__proto__']],
      ['{"steps":[{"title":"t","__proto__":null}]}', ['steps', 0, '__proto__']],
    ] as const) {
      const answer = await send(r.method, r.path, raw)
      const field = path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')
      const ok = legacy ? answer.status === 422 && JSON.stringify(answer.body.detail?.[0]?.loc) === JSON.stringify(['body', ...path]) : answer.status === 400 && answer.body.field === field
      if (!ok) wrong.push({ route: `${r.method} ${r.path}`, raw, status: answer.status, body: answer.body })
    }
  }
  expect(wrong).toEqual([])
})

test('credentials still come first, and a body without __proto__ is unaffected', async () => {
  const r = await fetch(`${s.url}/api/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"__proto__":{}}' })
  expect(r.status).toBe(401)
  expect((await s.api('POST', '/agents', { key, body: { name: 'Proto-free', metadata: undefined } })).status).toBe(201)
  // A string value that merely contains the word is fine.
  expect((await s.api('POST', '/agents', { key, body: { name: 'Words', greeting: '__proto__ is a word' } })).status).toBe(201)
})

test('actions that take no body refuse a member as unknown, and still take none or {}', async () => {
  const routes = s.server.app.routes as { method: string; path: string; hooks?: { body?: unknown } }[]
  // Every write route declares its body, so none ignores members it does not know.
  expect(routes.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method) && !r.hooks?.body).map((r) => `${r.method} ${r.path}`)).toEqual([])
  const actions = [
    '/api/v1/customers/:id/restore',
    '/api/v1/campaigns/:id/pause',
    '/api/v1/campaigns/:id/resume',
    '/api/v1/campaigns/:id/cancel',
    '/console/workspaces/:ws/conversations/:id/takeover',
    '/console/workspaces/:ws/conversations/:id/resolve',
    '/console/workspaces/:ws/conversations/:id/escalate',
    '/console/workspaces/:ws/campaigns/:id/start',
    '/agents/:id/unpublish',
    '/agents/:id/versions/:vid/rollback',
    '/webhooks/endpoints/:endpoint_id/deliveries/:delivery_id/retry',
  ]
  const wrong: unknown[] = []
  for (const path of actions) {
    const legacy = !path.startsWith('/api/v1') && !path.startsWith('/console')
    const answer = await send('POST', path, '{"force":true}')
    const ok = legacy
      ? answer.status === 422 && answer.body.detail?.[0]?.type === 'extra_forbidden' && answer.body.detail[0].loc?.[1] === 'force'
      : answer.status === 400 && answer.body.field === 'force'
    if (!ok) wrong.push({ path, status: answer.status, body: answer.body })
    // No body, or an empty one, reaches the action (here: a 404 for the made-up ids).
    for (const raw of [undefined, '{}']) {
      const auth = path.startsWith('/console') ? `Bearer ${s.consoleToken}` : `Bearer ${key}`
      const headers: Record<string, string> = { authorization: auth }
      if (raw) headers['content-type'] = 'application/json'
      const r = await fetch(`${s.url}${concrete(path)}`, { method: 'POST', headers, body: raw })
      if (r.status !== 404) wrong.push({ path, raw, status: r.status, body: await r.text() })
    }
  }
  expect(wrong).toEqual([])
})
