/**
 * The service with REDIS_URL set, as docker-compose runs it (MongoDB aside: no server here),
 * against a real local redis-server: boot, API, idempotency, and two instances sharing Redis.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRedis } from '../support/redis'
import { startTestServer, type TestServer } from '../support/server'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'

describeWithRedis('the service in Redis mode', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>
  let a: TestServer
  let b: TestServer
  beforeAll(async () => {
    redis = await startRedis()
    // Two instances, one data dir (the SQLite store stands in for the shared MongoDB), one Redis.
    const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'))
    const env = { REDIS_URL: redis.url, CONSOLE_TOKEN: 'console-token-for-redis-mode-tests', SQLITE_LOCKING: 'shared' }
    a = await startTestServer(env, dir)
    b = await startTestServer(env, dir)
  })
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await redis?.stop()
  })

  test('coordination is Redis', () => {
    expect(a.server.services.coordination.kind).toBe('redis')
  })

  test('an Idempotency-Key used on one instance replays on the other', async () => {
    const dev = await a.developer()
    const headers = { 'idempotency-key': 'cross-instance-1' }
    const first = await a.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' }, headers })
    const second = await b.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' }, headers })
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(second.body.id).toBe(first.body.id)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    const list = await b.api('GET', '/customers', { key: dev.key })
    expect(list.body.items).toHaveLength(1)
  })

  test('a key revoked on one instance stops working on the other at once (cached principals are dropped)', async () => {
    const dev = await a.developer()
    const customer = (await a.api('POST', '/customers', { key: dev.key, body: { name: 'Acme' } })).body.id
    const k = (await a.api('POST', `/customers/${customer}/keys`, { key: dev.key, body: { name: 'k', scope: 'build' } })).body
    // Both instances have it cached now.
    expect((await a.api('GET', '/agents', { key: k.key })).status).toBe(200)
    expect((await b.api('GET', '/agents', { key: k.key })).status).toBe(200)
    expect((await a.api('DELETE', `/customers/${customer}/keys/${k.id}`, { key: dev.key })).status).toBe(204)
    // The revocation crosses a pub/sub hop; within 5 s, far short of the 30 s a cached principal
    // lives, so only the drop message can make b refuse it.
    await until(
      'b to refuse the revoked key',
      () => b.api('GET', '/agents', { key: k.key }),
      (r) => r.status === 401,
      5_000,
    )
    expect((await a.api('GET', '/agents', { key: k.key })).status).toBe(401)
  })

  test('a plan change on one instance is seen by the other at once', async () => {
    const dev = await a.developer({ plan: 'free' })
    const gpt4o = async (s: TestServer) => (await s.api('GET', '/models', { key: dev.key })).body.items.find((m: any) => m.id === 'gpt-4o').available
    expect(await gpt4o(b)).toBe(false)
    expect((await a.console('PATCH', `/workspaces/${dev.id}`, { plan: 'pro' })).status).toBe(200)
    // Within 5 s: far short of the 30 s b's cached principal (and its plan) would live.
    await until(
      'b to see the new plan',
      () => gpt4o(b),
      (available) => available === true,
      5_000,
    )
  })
})
