/**
 * The coordination contract: every adapter must pass this suite unchanged. `open` must return a
 * fresh, empty instance each time (a new SQLite file, or a new Redis key prefix).
 *
 * Wall-clock waits: ttl/lease/claim expiry is measured in real time (PX semantics), so those tests
 * use a short ttl (SHORT_TTL_MS) and sleep well past it (PAST_SHORT_TTL_MS).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Coordination } from '../../src/coordination/port'
import { until } from '../support/until'

// 100 ms keeps each expiry test fast. Nothing is asserted while a short ttl must still hold (a
// stalled machine could outlast it): only its lapse, after sleeping well past it.
const SHORT_TTL_MS = 100
// 2.5× the ttl: a read of an expired Redis key (or SQLite row) misses at once, whatever the
// server's background expiry cycle does, so any margin works; the extra absorbs timer jitter.
const PAST_SHORT_TTL_MS = Math.round(SHORT_TTL_MS * 2.5)
// A ttl that cannot lapse during a test (an hour).
const LONG_TTL_MS = 3_600_000
// Upper bound for a pub/sub message to arrive over loopback; a timeout here means "never came".
const DELIVERY_TIMEOUT_MS = 2_000

// A service-clock instant aligned to whole seconds, so window arithmetic in the tests is exact.
const T = 1_700_000_000_000

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function coordinationContract(name: string, open: () => Promise<Coordination>): void {
  describe(`coordination contract: ${name}`, () => {
    let c: Coordination
    beforeEach(async () => {
      c = await open()
    })
    afterEach(async () => {
      await c.close()
    })

    describe('idempotency', () => {
      test('started, then in_flight, then done with the stored response', async () => {
        expect(await c.idempotencyBegin('k1', LONG_TTL_MS)).toEqual({ state: 'started' })
        expect(await c.idempotencyBegin('k1', LONG_TTL_MS)).toEqual({ state: 'in_flight' })
        const response = { status: 201, body: { id: 'cus_1', tags: ['a', 'b'] }, headers: { location: '/customers/cus_1' } }
        await c.idempotencyComplete('k1', response, LONG_TTL_MS)
        expect(await c.idempotencyBegin('k1', LONG_TTL_MS)).toEqual({ state: 'done', response })
        expect(await c.idempotencyBegin('k2', LONG_TTL_MS)).toEqual({ state: 'started' })
      })

      test("release lets the same key start again; only the owner's claim is released", async () => {
        await c.idempotencyBegin('k', LONG_TTL_MS, 'first')
        await c.idempotencyRelease('k', 'first')
        expect(await c.idempotencyBegin('k', LONG_TTL_MS, 'second')).toEqual({ state: 'started' })
        // A late release of the first claim leaves the second request's.
        await c.idempotencyRelease('k', 'first')
        expect(await c.idempotencyBegin('k', LONG_TTL_MS, 'third')).toEqual({ state: 'in_flight' })
        // A stored answer is kept whoever releases.
        const response = { status: 200, body: null }
        await c.idempotencyComplete('k', response, LONG_TTL_MS)
        await c.idempotencyRelease('k', 'second')
        expect(await c.idempotencyBegin('k', LONG_TTL_MS, 'third')).toEqual({ state: 'done', response })
        await c.idempotencyRelease('never-used', 'nobody')
      })

      test('in-flight claims and stored answers expire after their ttl', async () => {
        await c.idempotencyBegin('claim', SHORT_TTL_MS)
        await c.idempotencyBegin('answer', LONG_TTL_MS)
        await c.idempotencyComplete('answer', { status: 200, body: 'ok' }, SHORT_TTL_MS)
        await sleep(PAST_SHORT_TTL_MS)
        expect(await c.idempotencyBegin('claim', LONG_TTL_MS)).toEqual({ state: 'started' })
        expect(await c.idempotencyBegin('answer', LONG_TTL_MS)).toEqual({ state: 'started' })
      })
    })

    describe('rate limits', () => {
      test('the hit over the limit is refused with remaining 0 and resetAt at the window end', async () => {
        const hits = []
        for (let i = 0; i < 4; i++) hits.push(await c.rateHit('r', 3, 1_000, T + 100 * i))
        expect(hits.map((h) => [h.allowed, h.count, h.remaining])).toEqual([
          [true, 1, 2],
          [true, 2, 1],
          [true, 3, 0],
          [false, 4, 0],
        ])
        for (const h of hits) expect(h).toMatchObject({ limit: 3, resetAt: T + 1_000 })
        expect(await c.rateHit('r', 3, 1_000, T + 999)).toMatchObject({ allowed: false, remaining: 0 })
      })

      test('the next window starts from zero', async () => {
        for (let i = 0; i < 3; i++) await c.rateHit('r', 2, 1_000, T + 500)
        expect(await c.rateHit('r', 2, 1_000, T + 1_000)).toEqual({
          allowed: true,
          limit: 2,
          count: 1,
          remaining: 1,
          resetAt: T + 2_000,
        })
      })

      test('keys count independently', async () => {
        await c.rateHit('a', 1, 1_000, T)
        expect((await c.rateHit('a', 1, 1_000, T)).allowed).toBe(false)
        expect(await c.rateHit('b', 1, 1_000, T)).toMatchObject({ allowed: true, count: 1 })
      })
    })

    describe('leases', () => {
      test('a lease is exclusive and its owner can renew it', async () => {
        expect(await c.acquireLease('job', 'a', LONG_TTL_MS)).toBe(true)
        expect(await c.acquireLease('job', 'b', LONG_TTL_MS)).toBe(false)
        expect(await c.acquireLease('job', 'a', LONG_TTL_MS)).toBe(true)
        expect(await c.leaseOwner('job')).toBe('a')
        expect(await c.leaseOwner('other')).toBeNull()
      })

      test('renewing extends the lease from now', async () => {
        // Taken for the short ttl, renewed for a long one: well past the short ttl it still holds.
        // (A renewal that came after the short ttl lapsed is a fresh take with the same outcome.)
        await c.acquireLease('job', 'a', SHORT_TTL_MS)
        expect(await c.acquireLease('job', 'a', LONG_TTL_MS)).toBe(true)
        await sleep(PAST_SHORT_TTL_MS)
        expect(await c.leaseOwner('job')).toBe('a')
        expect(await c.acquireLease('job', 'b', LONG_TTL_MS)).toBe(false)
      })

      test('only the owner can release', async () => {
        await c.acquireLease('job', 'a', LONG_TTL_MS)
        await c.releaseLease('job', 'b')
        expect(await c.leaseOwner('job')).toBe('a')
        await c.releaseLease('job', 'a')
        expect(await c.leaseOwner('job')).toBeNull()
        expect(await c.acquireLease('job', 'b', LONG_TTL_MS)).toBe(true)
      })

      test('a lease lapses after its ttl', async () => {
        await c.acquireLease('job', 'a', SHORT_TTL_MS)
        await sleep(PAST_SHORT_TTL_MS)
        expect(await c.leaseOwner('job')).toBeNull()
        expect(await c.acquireLease('job', 'b', LONG_TTL_MS)).toBe(true)
      })
    })

    describe('slots (call lines)', () => {
      test('members hold slots up to the capacity; holding again renews without counting twice', async () => {
        expect(await c.acquireSlot('lines', 'a', 2, LONG_TTL_MS)).toEqual({ acquired: true, held: 1 })
        expect(await c.acquireSlot('lines', 'b', 2, LONG_TTL_MS)).toEqual({ acquired: true, held: 2 })
        expect(await c.acquireSlot('lines', 'a', 2, LONG_TTL_MS)).toEqual({ acquired: true, held: 2 })
        expect(await c.acquireSlot('lines', 'c', 2, LONG_TTL_MS)).toEqual({ acquired: false, held: 2 })
        expect(await c.slotsHeld('lines')).toBe(2)
        expect(await c.slotsHeld('other')).toBe(0)
      })

      test('a released slot is free again; releasing twice or a stranger is harmless', async () => {
        await c.acquireSlot('lines', 'a', 1, LONG_TTL_MS)
        await c.releaseSlot('lines', 'zzz')
        expect(await c.acquireSlot('lines', 'b', 1, LONG_TTL_MS)).toEqual({ acquired: false, held: 1 })
        await c.releaseSlot('lines', 'a')
        await c.releaseSlot('lines', 'a')
        expect(await c.acquireSlot('lines', 'b', 1, LONG_TTL_MS)).toEqual({ acquired: true, held: 1 })
      })

      test('concurrent holders never exceed the capacity', async () => {
        const tries = await Promise.all(Array.from({ length: 20 }, (_, i) => c.acquireSlot('burst', `m${i}`, 5, LONG_TTL_MS)))
        expect(tries.filter((t) => t.acquired)).toHaveLength(5)
        expect(await c.slotsHeld('burst')).toBe(5)
      })

      test('a slot nobody released lapses after its ttl', async () => {
        await c.acquireSlot('lines', 'a', 1, SHORT_TTL_MS)
        await sleep(PAST_SHORT_TTL_MS)
        expect(await c.slotsHeld('lines')).toBe(0)
        expect(await c.acquireSlot('lines', 'b', 1, LONG_TTL_MS)).toEqual({ acquired: true, held: 1 })
      })

      test('a capacity that is not a whole number is refused', async () => {
        await expect(c.acquireSlot('lines', 'a', -1, LONG_TTL_MS)).rejects.toThrow()
      })
    })

    describe('pub/sub', () => {
      test('every subscriber gets the message, only on its channel', async () => {
        const first: string[] = []
        const second: string[] = []
        const elsewhere: string[] = []
        const offs = [await c.subscribe('news', (m) => first.push(m)), await c.subscribe('news', (m) => second.push(m)), await c.subscribe('other', (m) => elsewhere.push(m))]
        await c.publish('news', 'hello')
        await until('both subscribers', () => first.length === 1 && second.length === 1, DELIVERY_TIMEOUT_MS)
        expect([first, second]).toEqual([['hello'], ['hello']])
        // Same connection and channel order: if 'other' had received 'hello' it would be here by now.
        await c.publish('other', 'ping')
        await until('the other channel', () => elsewhere.length === 1, DELIVERY_TIMEOUT_MS)
        expect(elsewhere).toEqual(['ping'])
        for (const off of offs) await off()
      })

      test('unsubscribe stops delivery to that subscriber only', async () => {
        const kept: string[] = []
        const dropped: string[] = []
        const offKept = await c.subscribe('news', (m) => kept.push(m))
        const offDropped = await c.subscribe('news', (m) => dropped.push(m))
        await offDropped()
        await offDropped() // a second call is harmless
        await c.publish('news', 'after')
        // The kept subscriber is the barrier: messages arrive in order on one channel.
        await until('the kept subscriber', () => kept.length === 1, DELIVERY_TIMEOUT_MS)
        expect(dropped).toEqual([])
        await offKept()
        await c.publish('news', 'nobody')
        await sleep(50)
        expect(kept).toEqual(['after'])
      })
    })

    timerContract(() => c)
  })
}

function timerContract(get: () => Coordination): void {
  describe('timers', () => {
    test('an empty store has no timers', async () => {
      const c = get()
      expect(await c.pendingTimers()).toBe(0)
      expect(await c.nextTimerDueAt()).toBeNull()
      expect(await c.claimDueTimers(T, 10, LONG_TTL_MS)).toEqual([])
      expect(await c.cancelTimer('nope')).toBe(false)
    })

    test('only due timers are claimed, oldest first, up to the limit', async () => {
      const c = get()
      await c.scheduleTimer({ id: 't3', dueAt: T + 30, payload: 3 })
      await c.scheduleTimer({ id: 't1', dueAt: T + 10, payload: 1 })
      await c.scheduleTimer({ id: 't2', dueAt: T + 20, payload: 2 })
      await c.scheduleTimer({ id: 'later', dueAt: T + 1_000, payload: 4 })
      expect(await c.pendingTimers()).toBe(4)
      expect(await c.timersDue(T + 5)).toBe(0)
      expect(await c.timersDue(T + 20)).toBe(2)
      expect(await c.nextTimerDueAt()).toBe(T + 10)
      expect(await c.claimDueTimers(T + 5, 10, LONG_TTL_MS)).toEqual([])

      const [a] = await c.claimDueTimers(T + 30, 1, LONG_TTL_MS)
      expect(a).toMatchObject({ id: 't1', dueAt: T + 10, payload: 1 })
      expect(typeof a.claim).toBe('string')
      const rest = await c.claimDueTimers(T + 30, 10, LONG_TTL_MS)
      expect(rest.map((t) => t.id)).toEqual(['t2', 't3'])
      // Claimed timers are hidden from claims and from nextTimerDueAt, but still pending.
      expect(await c.claimDueTimers(T + 30, 10, LONG_TTL_MS)).toEqual([])
      expect(await c.nextTimerDueAt()).toBe(T + 1_000)
      expect(await c.pendingTimers()).toBe(4)
      // Claimed is still due until acked: the backlog counts what is being delivered.
      expect(await c.timersDue(T + 30)).toBe(3)

      for (const t of [a, ...rest]) await c.ackTimer(t.id, t.claim)
      expect(await c.pendingTimers()).toBe(1)
      expect(await c.timersDue(T + 30)).toBe(0)
      expect(await c.timersDue(T + 1_000)).toBe(1)
      expect(await c.claimDueTimers(T + 1_000, 0, LONG_TTL_MS)).toEqual([])
    })

    test('scheduling the same id replaces the timer; cancel removes it', async () => {
      const c = get()
      await c.scheduleTimer({ id: 'x', dueAt: T + 10, payload: { v: 1 } })
      await c.scheduleTimer({ id: 'x', dueAt: T + 50, payload: { v: 2 } })
      expect(await c.pendingTimers()).toBe(1)
      expect(await c.nextTimerDueAt()).toBe(T + 50)
      expect(await c.claimDueTimers(T + 20, 10, LONG_TTL_MS)).toEqual([])
      expect(await c.cancelTimer('x')).toBe(true)
      expect(await c.cancelTimer('x')).toBe(false)
      expect(await c.pendingTimers()).toBe(0)
      expect(await c.claimDueTimers(T + 100, 10, LONG_TTL_MS)).toEqual([])
    })

    test('an un-acked claim is offered again after its lease, and the old claim no longer acks', async () => {
      const c = get()
      await c.scheduleTimer({ id: 'x', dueAt: T, payload: 'p' })
      // (That a live claim hides the timer is checked above with LONG_TTL_MS: a short one may lapse.)
      const [first] = await c.claimDueTimers(T, 10, SHORT_TTL_MS)
      // Wall time passes while the service clock stands still (a stopped manual clock).
      await sleep(PAST_SHORT_TTL_MS)
      expect(await c.nextTimerDueAt()).toBe(T)
      const [again] = await c.claimDueTimers(T, 10, LONG_TTL_MS)
      expect(again).toMatchObject({ id: 'x', dueAt: T, payload: 'p' })
      expect(again.claim).not.toBe(first.claim)
      await c.ackTimer('x', first.claim)
      expect(await c.pendingTimers()).toBe(1)
      await c.ackTimer('x', again.claim)
      expect(await c.pendingTimers()).toBe(0)
    })

    test('a timer rescheduled after its claim survives the ack of the old claim', async () => {
      const c = get()
      await c.scheduleTimer({ id: 'x', dueAt: T, payload: { v: 1 } })
      const [claimed] = await c.claimDueTimers(T, 10, LONG_TTL_MS)
      await c.scheduleTimer({ id: 'x', dueAt: T + 100, payload: { v: 2 } })
      await c.ackTimer('x', claimed.claim)
      expect(await c.pendingTimers()).toBe(1)
      expect(await c.nextTimerDueAt()).toBe(T + 100)
      const [next] = await c.claimDueTimers(T + 100, 10, LONG_TTL_MS)
      expect(next).toMatchObject({ id: 'x', dueAt: T + 100, payload: { v: 2 } })
    })

    test('cancelling a claimed timer removes it', async () => {
      const c = get()
      await c.scheduleTimer({ id: 'x', dueAt: T, payload: null })
      const [claimed] = await c.claimDueTimers(T, 10, LONG_TTL_MS)
      expect(await c.cancelTimer('x')).toBe(true)
      await c.ackTimer('x', claimed.claim)
      expect(await c.pendingTimers()).toBe(0)
    })

    test('restoring adds missing timers, moves later unclaimed ones earlier, leaves claimed ones', async () => {
      const c = get()
      await c.scheduleTimer({ id: 'later', dueAt: T + 500, payload: 'old' })
      await c.scheduleTimer({ id: 'earlier', dueAt: T + 5, payload: 'kept' })
      await c.scheduleTimer({ id: 'claimed', dueAt: T, payload: 'mine' })
      const [claimed] = await c.claimDueTimers(T, 10, LONG_TTL_MS)
      expect(claimed.id).toBe('claimed')
      const changed = await c.restoreTimers([
        { id: 'missing', dueAt: T + 20, payload: 'new' },
        { id: 'later', dueAt: T + 10, payload: 'moved' },
        { id: 'earlier', dueAt: T + 50, payload: 'ignored' },
        { id: 'claimed', dueAt: T + 1, payload: 'ignored' },
      ])
      expect(changed).toBe(2)
      expect(await c.pendingTimers()).toBe(4)
      // The claim still acks: the restore did not take the timer from its claimer.
      await c.ackTimer('claimed', claimed.claim)
      const due = await c.claimDueTimers(T + 1_000, 10, LONG_TTL_MS)
      expect(due.map((t) => [t.id, t.dueAt, t.payload])).toEqual([
        ['earlier', T + 5, 'kept'],
        ['later', T + 10, 'moved'],
        ['missing', T + 20, 'new'],
      ])
      expect(await c.restoreTimers([])).toBe(0)
    })

    test('the timers mark: absent at first, permanent once a rebuild ends, lapses if it never does', async () => {
      const c = get()
      expect(await c.timersMarked()).toBe(false)
      await c.beginTimerRebuild('dead', SHORT_TTL_MS)
      expect(await c.endTimerRebuild('other')).toBe(false)
      await sleep(PAST_SHORT_TTL_MS)
      // The rebuilder died: its mark lapsed and cannot be ended any more.
      expect(await c.timersMarked()).toBe(false)
      expect(await c.endTimerRebuild('dead')).toBe(false)
      await c.beginTimerRebuild('live', SHORT_TTL_MS)
      expect(await c.timersMarked()).toBe(true)
      expect(await c.endTimerRebuild('live')).toBe(true)
      await sleep(PAST_SHORT_TTL_MS)
      expect(await c.timersMarked()).toBe(true)
    })

    test('payloads round-trip as JSON', async () => {
      const c = get()
      const payload = {
        actor: 'call',
        id: 'call_9f3k',
        event: { type: 'retry', attempt: 2, at: '2026-11-21T10:00:00.000Z' },
        list: [1, 2.5, -3, true, false, null, 'ünïcödé ✓', { nested: [[]] }],
        empty: {},
      }
      await c.scheduleTimer({ id: 'json', dueAt: T, payload })
      await c.scheduleTimer({ id: 'none', dueAt: T + 1, payload: undefined })
      const claimed = await c.claimDueTimers(T + 1, 10, LONG_TTL_MS)
      expect(claimed.map((t) => [t.id, t.payload])).toEqual([
        ['json', payload],
        ['none', null], // JSON has no undefined
      ])
    })
  })
}
