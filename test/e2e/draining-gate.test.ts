/**
 * The draining gate in process (the child-process test covers the signal): once the drain has
 * begun, /health is 503 `draining`, writes on every surface and new WebSockets are refused 503 with
 * Retry-After, and reads and vendors' callbacks still pass.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import WebSocket from 'ws'
import { DRAINING_RETRY_AFTER_S } from '../../src/http/draining-gate'
import { startTestServer, type TestServer } from '../support/server'

let s: TestServer
let dev: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer()
  dev = await s.developer()
  expect((await fetch(`${s.url}/health`)).status).toBe(200)
  s.server.services.draining.begin(60)
})
afterAll(() => s?.stop())

test('/health answers 503 draining', async () => {
  const res = await fetch(`${s.url}/health`)
  expect(res.status).toBe(503)
  expect(await res.json()).toEqual({ ok: false, status: 'draining' })
})

test('writes are refused with Retry-After in each surface’s shape; reads pass', async () => {
  // Raw fetches: a 503 while draining is every route's, not one each route documents.
  const post = (path: string, bearer: string) =>
    fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Late' }) })
  const v1 = await post('/api/v1/agents', dev.key)
  expect(v1.status).toBe(503)
  expect(v1.headers.get('retry-after')).toBe(String(DRAINING_RETRY_AFTER_S))
  expect(((await v1.json()) as { error: string }).error).toMatch(/shutting down/)
  expect((await post('/console/workspaces', s.consoleToken)).status).toBe(503)
  const legacy = await post('/agents/ag_x/publish', dev.key)
  expect(legacy.status).toBe(503)
  expect(await legacy.json()).toMatchObject({ status: 503 })
  expect((await s.api('GET', '/agents', { key: dev.key })).status).toBe(200)
})

test("a vendor's callback is not refused", async () => {
  const res = await fetch(`${s.url}/telephony/twilio/status`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'CallSid=CA1' })
  expect(res.status).not.toBe(503)
})

test('a new media socket is refused 503 at the upgrade', async () => {
  const status = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/media/out_x/token`)
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
    ws.on('open', () => reject(new Error('the socket opened')))
    ws.on('error', () => {})
  })
  expect(status).toBe(503)
})
