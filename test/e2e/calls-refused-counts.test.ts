/**
 * Calls refused at capacity, per workspace, on the console's Quality read: at CALLS_MAX_LIVE=1
 * with one call live, calls placed by two workspaces' keys (503) and a call ringing in to one of
 * their numbers (busy) are counted for the workspace they belong to, per hour and per day, and the
 * counts survive a restart on the same data dir (a clean stop writes what is still in memory).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/server'

const ENV = { CONSOLE_TOKEN: 'refused-console-token-0123456789', CALLS_MAX_LIVE: '1' }
const dir = mkdtempSync(join(tmpdir(), 'refused-test-'))
let s: TestServer
let a: { id: string; key: string }
let b: { id: string; key: string }

beforeAll(async () => {
  s = await startTestServer(ENV, dir)
  a = await s.developer({ plan: 'pro', name: 'Alpha' })
  b = await s.developer({ plan: 'pro', name: 'Beta' })
  const agent = (await s.agent(a.key, { name: 'Desk', voice: { answersCalls: true } })).id
  expect((await s.console('POST', `/workspaces/${a.id}/phone-numbers`, { number: '+14155553800', source: 'rented', agent })).status).toBe(201)
})
afterAll(async () => {
  await s?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const refusedOf = async (ws: string, window: '24h' | '7d') => {
  const q = (await s.console('GET', `/workspaces/${ws}/quality?window=${window}`)).body
  return { overall: q.overall.refused, buckets: q.buckets.map((x: { refused: { total: number } }) => x.refused.total) }
}

test('refusals at capacity are counted for the workspace they belong to, by how they came', async () => {
  // The one call this instance has room for, ringing in to Alpha's number and held open.
  const first = await s.console('POST', '/sandbox/calls', { from: '+14155553899', to: '+14155553800', hangupAfterMs: null })
  expect(first.body.answered).toBe(true)
  for (const key of [a.key, a.key, b.key]) {
    const placed = await s.api('POST', '/calls', { key, body: { to: '+14155553801', purpose: 'Hello' } })
    expect(placed.status).toBe(503)
  }
  const busy = await s.console('POST', '/sandbox/calls', { from: '+14155553898', to: '+14155553800', hangupAfterMs: null })
  expect(busy.body.answered).toBe(false)

  const day = await refusedOf(a.id, '24h')
  expect(day.overall).toEqual({ total: 3, outbound: 2, inbound: 1, web: 0, calls: [] })
  expect(day.buckets.at(-1)).toBe(3)
  expect(day.buckets.slice(0, -1).every((n: number) => n === 0)).toBe(true)
  expect((await refusedOf(b.id, '24h')).overall).toEqual({ total: 1, outbound: 1, inbound: 0, web: 0, calls: [] })
  const week = await refusedOf(a.id, '7d')
  expect([week.overall.total, week.buckets.at(-1)]).toEqual([3, 3])
})

test('the counts survive a restart on the same data dir, those since the last read too', async () => {
  expect((await s.api('POST', '/calls', { key: b.key, body: { to: '+14155553801', purpose: 'Hello' } })).status).toBe(503)
  await s.stop()
  s = await startTestServer(ENV, dir)
  expect((await refusedOf(a.id, '24h')).overall.total).toBe(3)
  expect((await refusedOf(b.id, '7d')).overall.total).toBe(2)
})
