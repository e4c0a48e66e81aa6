/**
 * Two runtimes (two "instances") sharing one real Redis for coordination and one document store,
 * as two service processes would share Redis and MongoDB.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { ActorUnavailableError } from '../../actors/errors'
import type { ActorRuntime } from '../../actors/runtime'
import { ManualClock } from '../../src/clock'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { randomId } from '../../src/ids'
import { type RedisServer, startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'
import { type Env, makeRuntime, openEnv, removeDir, sleep, type TicketContext, ticketDeadlines, ticketMachine } from './support'

const T0 = Date.UTC(2026, 0, 1)
// Short enough that the "owner never answers" test is quick; far above a loopback round trip.
const FORWARD_TIMEOUT_MS = 500
// The runtimes' own lease ttl: a sender whose forward went unanswered waits at most this long for
// the silent owner's lease to lapse; short, so these tests stay quick.
const LEASE_TTL_MS = 1_000

describeWithRedis('actor runtime on a real Redis', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })

  describe('two runtimes on one Redis', () => {
    let env: Env
    let coordA: Coordination
    let coordB: Coordination
    let a: ActorRuntime
    let b: ActorRuntime
    let fired: string[]
    const clock = new ManualClock(T0)

    const runtime = (coordination: Coordination, instanceId: string) => {
      const rt = makeRuntime({ store: env.store, coordination }, clock, { instanceId, forwardTimeoutMs: FORWARD_TIMEOUT_MS, leaseTtlMs: LEASE_TTL_MS })
      const machine = ticketMachine.provide({ actions: { onFired: ({ context }) => void fired.push(`${instanceId}:${context.id}`) } })
      rt.register('ticket', { machine, version: 1, deadlines: ticketDeadlines })
      return rt
    }

    beforeEach(async () => {
      env = await openEnv()
      fired = []
      const prefix = `actors:${randomId()}:`
      coordA = await openRedisCoordination(redis.url, { prefix })
      coordB = await openRedisCoordination(redis.url, { prefix })
      a = runtime(coordA, 'instance-a')
      b = runtime(coordB, 'instance-b')
      await a.start()
      await b.start()
    })
    afterEach(async () => {
      await a.stop()
      await b.stop()
      await coordA.close()
      await coordB.close()
      await env.close()
      removeDir(env.dir)
    })

    test('events sent to the instance that does not hold the actor are forwarded, in order', async () => {
      await a.spawn('ticket', 'x', { id: 'x' })
      let both = false
      let sampling = true
      const sampler = (async () => {
        while (sampling) {
          if (a.isLive('ticket', 'x') && b.isLive('ticket', 'x')) both = true
          await sleep(1)
        }
      })()
      // Both instances send concurrently without waiting: each sender's events must keep their order.
      const fromB = Array.from({ length: 40 }, (_, n) => b.send('ticket', 'x', { type: 'push', n: 1000 + n }))
      const fromA = Array.from({ length: 40 }, (_, n) => a.send('ticket', 'x', { type: 'push', n: 2000 + n }))
      await Promise.all([...fromA, ...fromB])
      sampling = false
      await sampler
      expect(both).toBe(false)
      expect(a.isLive('ticket', 'x')).toBe(true)
      expect(b.isLive('ticket', 'x')).toBe(false)
      const log = ((await a.read('ticket', 'x'))!.snapshot as { context: TicketContext }).context.log
      expect(log).toHaveLength(80)
      expect(log.filter((n) => n < 2000)).toEqual(Array.from({ length: 40 }, (_, n) => 1000 + n))
      expect(log.filter((n) => n >= 2000)).toEqual(Array.from({ length: 40 }, (_, n) => 2000 + n))
      // The forwarded send answers with the owner's persisted snapshot.
      const viaB = await b.send('ticket', 'x', { type: 'push', n: 1 })
      expect(viaB.value).toBe('open')
      expect((viaB.context as TicketContext).log.at(-1)).toBe(1)
    })

    test('ownership moves with the lease: after passivation the other instance may take the actor', async () => {
      await a.spawn('ticket', 'y', { id: 'y' })
      expect(await a.passivate('ticket', 'y')).toBe(true)
      await b.send('ticket', 'y', { type: 'push', n: 1 })
      expect([a.isLive('ticket', 'y'), b.isLive('ticket', 'y')]).toEqual([false, true])
      await a.send('ticket', 'y', { type: 'push', n: 2 })
      expect([a.isLive('ticket', 'y'), b.isLive('ticket', 'y')]).toEqual([false, true])
      expect(((await b.read('ticket', 'y'))!.snapshot as { context: TicketContext }).context.log).toEqual([1, 2])
    })

    test('racing instances never hold the same actor at once', async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `r${i}`)
      for (const id of ids) await a.spawn('ticket', id, { id })
      await a.passivateIdle(true)
      let overlaps = 0
      let sends = 0
      let sampling = true
      const sampler = (async () => {
        while (sampling) {
          overlaps += ids.filter((id) => a.isLive('ticket', id) && b.isLive('ticket', id)).length
          await sleep(0)
        }
      })()
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          ids.flatMap((id, i) => [
            a.send('ticket', id, { type: 'push', n: round * 2 }).then(() => sends++),
            b.send('ticket', id, { type: 'push', n: round * 2 + 1 }).then(() => sends++),
            i % 2 ? a.passivate('ticket', id) : b.passivate('ticket', id),
          ]),
        )
      }
      sampling = false
      await sampler
      expect(overlaps).toBe(0)
      expect(sends).toBe(200)
      for (const id of ids) {
        const log = ((await a.read('ticket', id))!.snapshot as { context: TicketContext }).context.log
        expect(log).toHaveLength(10)
      }
    })

    test('timers claimed by one instance reach the actor held by the other', async () => {
      await a.spawn('ticket', 't', { id: 't' })
      await a.send('ticket', 't', { type: 'arm', name: 'x', at: T0 + 10 })
      expect(await b.runDue(T0 + 10)).toBe(1)
      expect(fired).toEqual(['instance-a:t'])
      expect(await coordA.pendingTimers()).toBe(0)
    })

    test('an owner that does not answer and keeps its lease past a lease ttl: the send fails with ActorUnavailableError', async () => {
      await a.spawn('ticket', 'z', { id: 'z' })
      await a.passivate('ticket', 'z')
      // A lease held by an instance that is gone (no subscriber on its inbox), for longer than the
      // test may run: the forward times out and the lease does not lapse within a ttl.
      expect(await coordA.acquireLease('actor:ticket:z', 'instance-gone', 60_000)).toBe(true)
      await expect(b.send('ticket', 'z', { type: 'push', n: 1 })).rejects.toBeInstanceOf(ActorUnavailableError)
      expect(b.isLive('ticket', 'z')).toBe(false)
    })

    test('an owner that died: once its lease lapses the event is delivered here, not lost', async () => {
      await a.spawn('ticket', 'd', { id: 'd' })
      await a.send('ticket', 'd', { type: 'push', n: 1 })
      await a.passivate('ticket', 'd')
      // The instance that held it died: nobody answers its inbox, its lease lapses on its own.
      expect(await coordA.acquireLease('actor:ticket:d', 'instance-dead', 800)).toBe(true)
      const after = await b.send('ticket', 'd', { type: 'push', n: 2 })
      expect((after.context as TicketContext).log).toEqual([1, 2])
      expect([a.isLive('ticket', 'd'), b.isLive('ticket', 'd')]).toEqual([false, true])
      expect(((await a.read('ticket', 'd'))!.snapshot as { context: TicketContext }).context.log).toEqual([1, 2])
    })
  })
})
