import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openCoordination } from '../../src/coordination'
import { openLocalCoordination } from '../../src/coordination/local'
import { coordinationContract } from './contract'

const dir = mkdtempSync(join(tmpdir(), 'coordination-local-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
// A real file per test (not ':memory:'), so WAL mode and the on-disk schema are what is tested.
coordinationContract('local (SQLite file)', () => openLocalCoordination(join(dir, `c${++files}.db`)))

describe('local coordination', () => {
  test('works on :memory:', async () => {
    const c = await openLocalCoordination(':memory:')
    expect(c.kind).toBe('local')
    await c.scheduleTimer({ id: 'x', dueAt: 1, payload: 1 })
    expect(await c.pendingTimers()).toBe(1)
    await c.close()
  })

  test('timers and idempotency records survive close and reopen of the same file', async () => {
    const file = join(dir, 'restart.db')
    const before = await openLocalCoordination(file)
    await before.scheduleTimer({ id: 'wake', dueAt: 1_000, payload: { actor: 'call_1', event: 'retry' } })
    await before.scheduleTimer({ id: 'later', dueAt: 5_000, payload: null })
    await before.idempotencyBegin('done-key', 3_600_000)
    await before.idempotencyComplete('done-key', { status: 201, body: { id: 'x' } }, 3_600_000)
    await before.idempotencyBegin('busy-key', 3_600_000)
    await before.close()

    const after = await openLocalCoordination(file)
    expect(await after.pendingTimers()).toBe(2)
    expect(await after.nextTimerDueAt()).toBe(1_000)
    const [timer] = await after.claimDueTimers(1_000, 10, 60_000)
    expect(timer).toMatchObject({ id: 'wake', dueAt: 1_000, payload: { actor: 'call_1', event: 'retry' } })
    expect(await after.idempotencyBegin('done-key', 3_600_000)).toEqual({
      state: 'done',
      response: { status: 201, body: { id: 'x' } },
    })
    expect(await after.idempotencyBegin('busy-key', 3_600_000)).toEqual({ state: 'in_flight' })
    await after.close()
  })

  test('openCoordination without a Redis URL opens coordination.db in the data dir, creating it', async () => {
    const dataDir = join(dir, 'nested', 'data')
    const c = await openCoordination({ dataDir })
    expect(c.kind).toBe('local')
    expect(existsSync(join(dataDir, 'coordination.db'))).toBe(true)
    await c.close()
  })

  test('refuses a non-positive ttl', async () => {
    const c = await openLocalCoordination(':memory:')
    await expect(c.idempotencyBegin('k', 0)).rejects.toThrow(RangeError)
    await expect(c.acquireLease('l', 'a', -1)).rejects.toThrow(RangeError)
    await c.close()
  })
})
