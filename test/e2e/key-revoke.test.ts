/**
 * Keys are resolved from a cache on the request path; revoking or rotating one takes effect on the
 * very next request, on the instance that revoked it (the other instances: redis-mode.test.ts),
 * long before a cached principal would expire.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/server'

let t: TestServer

beforeAll(async () => {
  t = await startTestServer()
})

afterAll(async () => {
  await t?.stop()
})

test('a rotated developer key: the new one works, the old one is refused at once', async () => {
  const dev = await t.developer()
  const issued = await t.console('POST', `/workspaces/${dev.id}/keys`, { name: 'old', scope: 'full' })
  expect(issued.status).toBe(201)
  const old = issued.body as { id: string; key: string }
  // Used, so its principal is cached.
  expect((await t.api('GET', '/agents', { key: old.key })).status).toBe(200)
  expect((await t.api('GET', '/agents', { key: old.key })).status).toBe(200)
  const rotated = (await t.console('POST', `/workspaces/${dev.id}/keys`, { name: 'new', scope: 'full' })).body as { key: string }
  expect((await t.console('DELETE', `/workspaces/${dev.id}/keys/${old.id}`)).status).toBe(204)
  const refused = await t.api('GET', '/agents', { key: old.key })
  expect(refused.status).toBe(401)
  expect(refused.body.error).toMatch(/revoked/)
  expect((await t.api('GET', '/agents', { key: rotated.key })).status).toBe(200)
  // The workspace's first key was never touched.
  expect((await t.api('GET', '/agents', { key: dev.key })).status).toBe(200)
})

test('a customer key revoked through the API is refused on its next request, writes included', async () => {
  const dev = await t.developer()
  const customer = (await t.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })).body.id as string
  const k = (await t.api('POST', `/customers/${customer}/keys`, { key: dev.key, body: { name: 'k', scope: 'full' } })).body as { id: string; key: string }
  expect((await t.api('GET', '/agents', { key: k.key })).status).toBe(200)
  expect((await t.api('DELETE', `/customers/${customer}/keys/${k.id}`, { key: dev.key })).status).toBe(204)
  expect((await t.api('GET', '/agents', { key: k.key })).status).toBe(401)
  expect((await t.api('POST', '/agents', { key: k.key, body: { name: 'Too late' } })).status).toBe(401)
})

test('a deleted customer: its cached key is refused at once', async () => {
  const dev = await t.developer()
  const customer = (await t.api('POST', '/customers', { key: dev.key, body: { name: 'Gone' } })).body.id as string
  const k = (await t.api('POST', `/customers/${customer}/keys`, { key: dev.key, body: { name: 'k', scope: 'read' } })).body as { key: string }
  expect((await t.api('GET', '/agents', { key: k.key })).status).toBe(200)
  expect((await t.api('DELETE', `/customers/${customer}`, { key: dev.key })).status).toBe(200)
  expect((await t.api('GET', '/agents', { key: k.key })).status).toBe(401)
})
