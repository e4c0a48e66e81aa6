import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openLocalCoordination } from '../../src/coordination/local'
import type { Coordination } from '../../src/coordination/port'
import { openRedisCoordination } from '../../src/coordination/redis'
import { idempotent } from '../../src/http/idempotency'
import { notAllowed, Refused } from '../../src/refusals'
import { startRedis } from '../support/redis'
import { describeWithRedis } from '../support/system-binary'

function suite(name: string, open: () => Promise<Coordination>) {
  describe(`idempotent() on ${name}`, () => {
    let c: Coordination
    beforeAll(async () => {
      c = await open()
    })
    afterAll(() => c.close())

    test('no key: runs every time', async () => {
      let runs = 0
      const run = async () => ({ status: 201, body: { n: ++runs } })
      await idempotent(c, 's', undefined, {}, run)
      await idempotent(c, 's', undefined, {}, run)
      expect(runs).toBe(2)
    })

    test('repeat returns the first answer, marked replayed, without running', async () => {
      let runs = 0
      const run = async () => ({ status: 201, body: { n: ++runs } })
      const a = await idempotent(c, 's', 'k-repeat', { x: 1 }, run)
      const b = await idempotent(c, 's', 'k-repeat', { x: 1 }, run)
      expect(runs).toBe(1)
      expect(a).toEqual({ status: 201, body: { n: 1 }, replayed: false })
      expect(b).toEqual({ status: 201, body: { n: 1 }, replayed: true })
    })

    test('a second request while the first runs → 409', async () => {
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      let running!: () => void
      const firstRuns = new Promise<void>((r) => (running = r))
      const first = idempotent(c, 's', 'k-flight', {}, async () => {
        running()
        await gate
        return { status: 202, body: {} }
      })
      await firstRuns // the key is claimed before the handler runs
      let caught: unknown
      try {
        await idempotent(c, 's', 'k-flight', {}, async () => ({ status: 202, body: {} }))
      } catch (e) {
        caught = e
      }
      expect(caught).toBeInstanceOf(Refused)
      expect((caught as Refused).reason).toBe('conflict')
      release()
      expect((await first).status).toBe(202)
    })

    test('a 5xx answer or a crash releases the key; a 4xx refusal is kept', async () => {
      let runs = 0
      await idempotent(c, 's', 'k-502', {}, async () => ({ status: 502, body: { n: ++runs } }))
      const retry = await idempotent(c, 's', 'k-502', {}, async () => ({ status: 202, body: { n: ++runs } }))
      expect(retry).toEqual({ status: 202, body: { n: 2 }, replayed: false })
      await idempotent(c, 's', 'k-507', {}, async () => ({ status: 507, body: { n: ++runs } }))
      expect(await idempotent(c, 's', 'k-507', {}, async () => ({ status: 201, body: { n: ++runs } }))).toEqual({ status: 201, body: { n: 4 }, replayed: false })

      await expect(
        idempotent(c, 's', 'k-crash', {}, async () => {
          throw new Error('boom')
        }),
      ).rejects.toThrow('boom')
      expect((await idempotent(c, 's', 'k-crash', {}, async () => ({ status: 200, body: {} }))).replayed).toBe(false)

      await expect(
        idempotent(c, 's', 'k-403', {}, async () => {
          throw notAllowed('not a contact')
        }),
      ).rejects.toThrow('not a contact')
      const replay = await idempotent(c, 's', 'k-403', {}, async () => ({ status: 200, body: {} }))
      expect(replay).toEqual({ status: 403, body: { error: 'not a contact' }, replayed: true })
    })

    test('scopes keep keys apart; a different body with the same key is refused', async () => {
      await idempotent(c, 'ws_a', 'shared', { a: 1 }, async () => ({ status: 201, body: 'a' }))
      const other = await idempotent(c, 'ws_b', 'shared', { a: 2 }, async () => ({ status: 201, body: 'b' }))
      expect(other.body).toBe('b')
      await expect(idempotent(c, 'ws_a', 'shared', { a: 2 }, async () => ({ status: 201, body: 'c' }))).rejects.toThrow('Idempotency-Key')
      await expect(idempotent(c, 'ws_a', 'x'.repeat(256), {}, async () => ({ status: 201, body: 'c' }))).rejects.toThrow('Idempotency-Key')
    })
  })
}

suite('the local adapter', () => openLocalCoordination(':memory:'))

describeWithRedis('idempotency on a real Redis', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis?.stop())
  suite('Redis', () => openRedisCoordination(redis.url, { prefix: `idem-test-${Date.now()}:` }))
})
