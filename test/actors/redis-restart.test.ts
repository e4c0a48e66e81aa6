/**
 * A Redis restarted empty (kill -9, no persistence) loses every durable timer it held. The actors'
 * stored snapshots still list their deadlines, so the runtime rebuilds the timers from them once
 * it finds the coordination store's mark gone: while running, and at its next start.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'bun:test'
import type { ActorRuntime } from '../../actors/runtime'
import { ManualClock } from '../../src/clock'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { randomId } from '../../src/ids'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'
import { until } from '../support/until'
import { type Env, makeRuntime, openEnv, removeDir, type TicketContext, ticketDeadlines, ticketMachine } from './support'

const T0 = Date.UTC(2026, 0, 1)
const SEC = 1_000
// The runtime looks for the mark every second (timer-rebuild.ts CHECK_MS) and node-redis
// reconnects within 2 s; 15 s leaves a loaded CI runner ample room.
const REBUILD_WAIT_MS = 15_000

describeWithRedis('durable timers when Redis restarts empty', () => {
  let redis: RedisServer
  let env: Env
  let coordination: Coordination
  let runtime: ActorRuntime
  let clock: ManualClock

  const start = async () => {
    runtime = makeRuntime({ store: env.store, coordination }, clock)
    runtime.register('ticket', { machine: ticketMachine, version: 1, deadlines: ticketDeadlines })
    await runtime.start()
  }
  const fired = async (ids: string[]) => {
    const out: string[] = []
    for (const id of ids) out.push(...((await runtime.read('ticket', id))!.snapshot as { context: TicketContext }).context.fired.map((n) => `${id}:${n}`))
    return out
  }

  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })
  beforeEach(async () => {
    env = await openEnv()
    clock = new ManualClock(T0)
    coordination = await openRedisCoordination(redis.url, { prefix: `restart:${randomId()}:`, onError: () => {} })
  })
  afterEach(async () => {
    await runtime.stop()
    await coordination.close()
    await env.close()
    removeDir(env.dir)
  })

  test('while instances run: the timers come back once the empty Redis is seen, and fire', async () => {
    await start()
    const ids = Array.from({ length: 8 }, (_, i) => `t${i}`)
    for (const id of ids) {
      await runtime.spawn('ticket', id, { id })
      await runtime.send('ticket', id, { type: 'arm', name: 'due', at: T0 + 30 * SEC })
    }
    // One more armed and disarmed: it waits for nothing, so nothing is rebuilt for it.
    await runtime.spawn('ticket', 'gone', { id: 'gone' })
    await runtime.send('ticket', 'gone', { type: 'arm', name: 'due', at: T0 + 30 * SEC })
    await runtime.send('ticket', 'gone', { type: 'disarm', name: 'due' })
    // Half of them passivated: nothing of them is in memory, only their stored snapshots.
    for (const id of ids.slice(0, 4)) expect(await runtime.passivate('ticket', id)).toBe(true)
    expect(await coordination.pendingTimers()).toBe(8)

    await redis.crash()
    await redis.restart()
    await until('the timers to be rebuilt', async () => (await coordination.pendingTimers().catch(() => 0)) === 8, REBUILD_WAIT_MS)
    expect(await coordination.timersMarked()).toBe(true)

    clock.advance(30 * SEC)
    expect(await runtime.runDue()).toBe(8)
    expect(await fired([...ids, 'gone'])).toEqual(ids.map((id) => `${id}:due`))
    expect(await coordination.pendingTimers()).toBe(0)
  }, 30_000)

  test('while the service is down: the next start rebuilds them before claiming', async () => {
    await start()
    await runtime.spawn('ticket', 'b', { id: 'b' })
    await runtime.send('ticket', 'b', { type: 'arm', name: 'due', at: T0 + 30 * SEC })
    await runtime.stop()
    await redis.crash()
    await redis.restart()
    await until('the client to reconnect', async () => (await coordination.pendingTimers().catch(() => -1)) === 0, REBUILD_WAIT_MS)

    await start()
    expect(await coordination.pendingTimers()).toBe(1)
    clock.advance(30 * SEC)
    expect(await runtime.runDue()).toBe(1)
    expect(await fired(['b'])).toEqual(['b:due'])
  }, 30_000)
})
