/**
 * Issue 3's crash test at the level of the whole service: start `bun src/index.ts`, create
 * actors with pending durable timers (deleted customers waiting 30 days for erasure), kill -9 the
 * process, start it again on the same DATA_DIR, move the manual clock past the deadlines, and see
 * every timer fire: every customer erased, none left waiting, none twice.
 * (test/actors/crash.test.ts does the same at runtime level, with kills between claim and ack.)
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'

const TOKEN = 'crash-test-console-token-0123456789'
const CUSTOMERS = 12
const DAY = 86_400_000
const dataDir = mkdtempSync(join(tmpdir(), 'svc-crash-'))
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

test('kill -9 with pending durable timers, restart: every timer fires once', async () => {
  const port = await freePort()
  const call = childClient(port)

  child = await startChildService(port, { DATA_DIR: dataDir, SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'warn' })
  const dev = await call('POST', '/console/workspaces', TOKEN, { name: 'Crash', plan: 'pro' })
  const ids: string[] = []
  for (let i = 0; i < CUSTOMERS; i++) {
    const c = await call('POST', '/api/v1/customers', dev.body.key, { name: `Customer ${i}` })
    expect((await call('DELETE', `/api/v1/customers/${c.body.id}`, dev.body.key)).status).toBe(200)
    ids.push(c.body.id)
  }
  child.kill('SIGKILL')
  await child.exited

  child = await startChildService(port, { DATA_DIR: dataDir, SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'warn' })
  // Still waiting: 29 days in, nothing is erased.
  await call('POST', '/console/clock/advance', TOKEN, { ms: 29 * DAY })
  for (const id of ids) expect((await call('GET', `/api/v1/customers/${id}`, dev.body.key)).body.archivedAt).toBeString()
  // Past the deadline: the advance answers after every due timer has fired and its effect ran.
  expect((await call('POST', '/console/clock/advance', TOKEN, { ms: 2 * DAY })).status).toBe(200)
  const erasedAt = new Set<number>()
  for (const id of ids) {
    expect((await call('GET', `/api/v1/customers/${id}`, dev.body.key)).status).toBe(404)
    const actor = await call('GET', `/console/actors/customerWorkspace:${id}`, TOKEN)
    expect(actor.body.value).toBe('erased')
    expect(actor.body.pendingWork).toBe(false)
    expect(actor.body.deadlines).toEqual([])
    erasedAt.add(actor.body.context.erasedAt)
  }
  // One erasure per customer, all at the single advance that crossed the deadline.
  expect(erasedAt.size).toBe(1)
  // A later advance finds nothing left to fire and changes nothing.
  await call('POST', '/console/clock/advance', TOKEN, { ms: DAY })
  for (const id of ids) {
    const actor = await call('GET', `/console/actors/customerWorkspace:${id}`, TOKEN)
    expect([...erasedAt]).toContain(actor.body.context.erasedAt)
  }
  child.kill('SIGKILL')
  await child.exited
  child = null
})
