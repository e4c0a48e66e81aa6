import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { VersionMismatchError } from '../../actors/errors'
import type { ActorRuntime } from '../../actors/runtime'
import type { StoredVersion } from '../../actors/types'
import { ManualClock } from '../../src/clock'
import { captureLogger, type Env, type LogLines, makeRuntime, openEnv, removeDir, ticketDeadlines, ticketMachine } from './support'

const T0 = Date.UTC(2026, 0, 1)

describe('chart version of stored snapshots', () => {
  let env: Env
  let log: LogLines
  const clock = new ManualClock(T0)
  const runtimes: ActorRuntime[] = []

  const boot = async (version: number, migrate?: (s: StoredVersion) => unknown | null) => {
    const rt = makeRuntime(env, clock, { logger: log.logger })
    rt.register('ticket', { machine: ticketMachine, version, deadlines: ticketDeadlines, migrate })
    await rt.start()
    runtimes.push(rt)
    return rt
  }

  beforeEach(async () => {
    env = await openEnv()
    log = captureLogger()
    const v1 = await boot(1)
    await v1.spawn('ticket', 't1', { id: 't1' })
    await v1.send('ticket', 't1', { type: 'push', n: 1 })
    await v1.send('ticket', 't1', { type: 'arm', name: 'x', at: T0 + 1000 })
    await v1.stop()
  })
  afterEach(async () => {
    for (const rt of runtimes.splice(0)) await rt.stop()
    await env.close()
    removeDir(env.dir)
  })

  test('a snapshot from another version is reported, never resumed silently', async () => {
    const v2 = await boot(2)
    expect(await v2.read('ticket', 't1')).toMatchObject({ version: 1, versionMismatch: { stored: 1, current: 2 } })
    await expect(v2.send('ticket', 't1', { type: 'push', n: 2 })).rejects.toBeInstanceOf(VersionMismatchError)
    expect(v2.isLive('ticket', 't1')).toBe(false)
    expect(log.lines.some((l) => l.msg.includes('version mismatch') && l.actor === 'ticket:t1')).toBe(true)
    // Its timer is kept (not acked) until a migration makes it deliverable.
    expect(await v2.runDue(T0 + 1000)).toBe(0)
    expect(await env.coordination.pendingTimers()).toBe(1)
    // Unchanged in the store.
    expect(await v2.read('ticket', 't1')).toMatchObject({ version: 1, snapshot: { context: { log: [1] } } })
    expect(await v2.describe('ticket:t1')).toMatchObject({ version: 1, currentVersion: 2, live: false })
  })

  test('the migration hook turns an old snapshot into one for the current chart', async () => {
    const seen: StoredVersion[] = []
    const v2 = await boot(2, (stored) => {
      seen.push(stored)
      if (stored.version !== 1) return null
      const snap = stored.snapshot as { context: { log: number[] } }
      return { ...snap, context: { ...snap.context, log: [...snap.context.log, 100] } }
    })
    const snap = await v2.send('ticket', 't1', { type: 'push', n: 2 })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ version: 1, state: 'open' })
    expect(snap.context).toMatchObject({ log: [1, 100, 2] })
    expect(await v2.read('ticket', 't1')).toMatchObject({ version: 2, versionMismatch: null })
  })
})
