import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { fromPromise } from 'xstate'
import { ActorExistsError, ActorNotFoundError } from '../../actors/errors'
import type { ActorRuntime } from '../../actors/runtime'
import { ACTOR_SNAPSHOTS } from '../../actors/snapshot-store'
import type { StoredActor } from '../../actors/types'
import { ManualClock } from '../../src/clock'
import type { Collection, Doc, DocumentStore } from '../../src/store/port'
import { until } from '../support/until'
import { type Env, gate, makeRuntime, openEnv, removeDir, type TicketContext, ticketDeadlines, ticketMachine, WAIT_MS } from './support'

const T0 = Date.UTC(2026, 0, 1)

/**
 * The store, with every write to actor_snapshots recorded (what was written, in order); while
 * `hold()` gives a promise, each such write waits for it before reaching the store.
 */
function recordingStore(inner: DocumentStore, writes: StoredActor[], hold: () => Promise<unknown> | null = () => null): DocumentStore {
  return {
    kind: inner.kind,
    atomic: inner.atomic,
    commit: (writes) => inner.commit(writes),
    health: () => inner.health(),
    close: () => inner.close(),
    async collection<T extends Doc>(spec: Parameters<DocumentStore['collection']>[0]): Promise<Collection<T>> {
      const c = await inner.collection<T>(spec)
      if (spec.name !== ACTOR_SNAPSHOTS) return c
      return Object.assign(Object.create(c) as Collection<T>, {
        upsert: async (doc: T) => {
          // The runtime opens this collection as StoredActor; the store's generic T is its caller's word.
          writes.push(structuredClone(doc) as unknown as StoredActor)
          await hold()
          return c.upsert(doc)
        },
      })
    },
  }
}

const ctx = (doc: StoredActor | null) => (doc!.snapshot as { context: TicketContext }).context

describe('actor runtime (embedded store)', () => {
  let env: Env
  let writes: StoredActor[]
  let runtime: ActorRuntime
  let effectCalls: number
  let effectGate: ReturnType<typeof gate<number>>
  let writeGate: ReturnType<typeof gate<void>> | null = null
  const clock = new ManualClock(T0)

  const boot = async (opts: { idleMs?: number } = {}) => {
    const rt = makeRuntime({ store: recordingStore(env.store, writes, () => writeGate?.promise ?? null), coordination: env.coordination }, clock)
    const machine = ticketMachine.provide({
      actors: {
        effect: fromPromise(async () => {
          effectCalls++
          return effectGate.promise
        }),
      },
    })
    rt.register('ticket', { machine, version: 1, deadlines: ticketDeadlines, idleMs: opts.idleMs })
    await rt.start()
    return rt
  }

  beforeEach(async () => {
    env = await openEnv()
    writes = []
    effectCalls = 0
    effectGate = gate()
    runtime = await boot()
  })
  afterEach(async () => {
    effectGate.open(0)
    await runtime.stop()
    await env.close()
    removeDir(env.dir)
  })

  test('concurrent sends to one actor are processed and persisted strictly in order', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    const sends = Array.from({ length: 100 }, (_, n) => runtime.send('ticket', 't1', { type: 'push', n }))
    const results = await Promise.all(sends)
    // Each send resolves with the snapshot that includes its own event and none after it.
    results.forEach((snap, n) => {
      expect((snap.context as TicketContext).log.length).toBe(n + 1)
    })
    expect(ctx(await runtime.read('ticket', 't1')).log).toEqual(Array.from({ length: 100 }, (_, n) => n))
    // One write per change, in the order the changes happened.
    const lengths = writes.filter((w) => w.resourceId === 't1').map((w) => ctx(w).log.length)
    expect(lengths).toEqual(Array.from({ length: 101 }, (_, n) => n))
  })

  test('an actor waiting on its effect does not hold up other actors', async () => {
    await runtime.spawn('ticket', 'busy', { id: 'busy' })
    await runtime.spawn('ticket', 'free', { id: 'free' })
    await runtime.send('ticket', 'busy', { type: 'work' })
    const snap = await runtime.send('ticket', 'free', { type: 'push', n: 1 })
    expect((snap.context as TicketContext).log).toEqual([1])
    expect((await runtime.read('ticket', 'busy'))?.state).toBe('working')
  })

  test('settle waits for the effect an event started and returns the stored outcome; times out while it runs', async () => {
    await runtime.spawn('ticket', 'eff', { id: 'eff' })
    await runtime.send('ticket', 'eff', { type: 'work' })
    await expect(runtime.settle('ticket', 'eff', 60)).rejects.toThrow('did not settle')
    const settling = runtime.settle('ticket', 'eff')
    effectGate.open(7)
    const settled = await settling
    expect(settled.pendingWork).toBe(false)
    expect(settled.state).toBe('open')
    expect(ctx(settled).worked).toBe(1)
  })

  test('settle with `until` answers once the snapshot shows it, with the stored actor, while the effect still runs', async () => {
    await runtime.spawn('ticket', 'early', { id: 'early' })
    await runtime.send('ticket', 'early', { type: 'work' })
    // The effect never finishes here: only the predicate can end the wait (else this times out).
    const settled = await runtime.settle('ticket', 'early', 2_000, (snap) => snap.value === 'working')
    expect(settled.state).toBe('working')
    expect(settled.pendingWork).toBe(true)
    // A predicate that never holds still settles when the effect is done.
    const later = runtime.settle('ticket', 'early', 2_000, () => false)
    effectGate.open(3)
    expect((await later).state).toBe('open')
  })

  test('reach answers from the live snapshot once it shows the outcome, before the actor has stored it', async () => {
    await runtime.spawn('ticket', 'r1', { id: 'r1' })
    await runtime.send('ticket', 'r1', { type: 'work' })
    writeGate = gate<void>()
    effectGate.open(5)
    const seen = await runtime.reach('ticket', 'r1', (snap) => snap.value === 'open')
    expect(seen.value).toBe('open')
    expect((seen.context as TicketContext).worked).toBe(1)
    // The write recording it is held: the store still has the actor working, and settle waits for it.
    expect((await runtime.read('ticket', 'r1'))?.state).toBe('working')
    let settled = false
    const settling = runtime.settle('ticket', 'r1').then((r) => {
      settled = true
      return r
    })
    await Bun.sleep(30)
    expect(settled).toBe(false)
    writeGate.open()
    writeGate = null
    expect((await settling).state).toBe('open')
  })

  test('reach on an actor this instance does not hold answers from the store; it times out while the effect runs', async () => {
    await runtime.spawn('ticket', 'r2', { id: 'r2' })
    await runtime.send('ticket', 'r2', { type: 'work' })
    await expect(runtime.reach('ticket', 'r2', () => false, 60)).rejects.toThrow('did not settle')
    // Another instance holds nothing of it: it reads the stored snapshot (working, the effect in flight).
    const other = await boot()
    try {
      const stored = await other.reach('ticket', 'r2', (snap) => snap.value === 'working')
      expect(stored.value).toBe('working')
    } finally {
      await other.stop()
    }
  })

  test('every change is persisted, including ones an effect causes; a no-op event writes nothing', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    expect(writes).toHaveLength(1)
    await runtime.send('ticket', 't1', { type: 'ping' })
    expect(writes).toHaveLength(1)
    const working = await runtime.send('ticket', 't1', { type: 'work' })
    expect(working.value).toBe('working')
    const stored = await runtime.read('ticket', 't1')
    expect(stored).toMatchObject({ state: 'working', pendingWork: true, version: 1, kind: 'ticket', resourceId: 't1' })
    effectGate.open(7)
    await until('the effect-driven change to be stored', async () => (await runtime.read('ticket', 't1'))?.state === 'open', WAIT_MS)
    const done = await runtime.read('ticket', 't1')
    expect(done?.pendingWork).toBe(false)
    expect(ctx(done).worked).toBe(1)
    expect(writes.map((w) => w.state)).toEqual(['open', 'working', 'open'])
    clock.advance(1000)
    await runtime.send('ticket', 't1', { type: 'push', n: 1 })
    expect(new Set(writes.map((w) => w.createdAt)).size).toBe(1)
    expect(writes.at(-1)!.updatedAt > writes[0].updatedAt).toBe(true)
  })

  test('a restarted runtime resumes state and context from the store', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    await runtime.send('ticket', 't1', { type: 'push', n: 1 })
    await runtime.send('ticket', 't1', { type: 'arm', name: 'remind', at: T0 + 60_000 })
    await runtime.stop()
    runtime = await boot()
    // Nothing is in memory until an event arrives (only a deadline is pending).
    expect(runtime.liveCount).toBe(0)
    const snap = await runtime.send('ticket', 't1', { type: 'push', n: 2 })
    expect(snap.value).toBe('open')
    expect(snap.context).toMatchObject({ id: 't1', log: [1, 2], deadlines: { remind: T0 + 60_000 } })
  })

  test('boot resumes only actors with pending work, and re-runs their effect', async () => {
    await runtime.spawn('ticket', 'working', { id: 'working' })
    await runtime.spawn('ticket', 'waiting', { id: 'waiting' })
    await runtime.send('ticket', 'working', { type: 'work' })
    await runtime.send('ticket', 'waiting', { type: 'arm', name: 'later', at: T0 + 1_000 })
    expect(effectCalls).toBe(1)
    await runtime.stop() // the effect dies with the process
    effectGate = gate()
    runtime = await boot()
    expect(runtime.isLive('ticket', 'working')).toBe(true)
    expect(runtime.isLive('ticket', 'waiting')).toBe(false)
    expect(effectCalls).toBe(2)
    effectGate.open(1)
    await until('the resumed effect to finish', async () => (await runtime.read('ticket', 'working'))?.state === 'open', WAIT_MS)
  })

  test('an idle actor is passivated (snapshot kept) and the next send resumes it', async () => {
    await runtime.stop()
    runtime = await boot({ idleMs: 0 })
    await runtime.spawn('ticket', 't1', { id: 't1' })
    await runtime.send('ticket', 't1', { type: 'push', n: 1 })
    await until('passivation', () => runtime.liveCount === 0, WAIT_MS)
    expect(ctx(await runtime.read('ticket', 't1')).log).toEqual([1])
    // An actor with an effect in flight is not passivated.
    await runtime.send('ticket', 't1', { type: 'work' })
    expect(await runtime.passivate('ticket', 't1')).toBe(false)
    expect(runtime.isLive('ticket', 't1')).toBe(true)
    effectGate.open(0)
    await until('passivation after the effect', () => runtime.liveCount === 0, WAIT_MS)
    const snap = await runtime.send('ticket', 't1', { type: 'push', n: 2 })
    expect((snap.context as TicketContext).log).toEqual([1, 2])
  })

  test("the sweep passivates actors idle for their kind's idleMs", async () => {
    await runtime.stop()
    runtime = await boot({ idleMs: 150 })
    await runtime.spawn('ticket', 't1', { id: 't1' })
    expect(runtime.isLive('ticket', 't1')).toBe(true)
    await until('the sweep to passivate it', () => runtime.liveCount === 0, 3_000)
    expect((await runtime.read('ticket', 't1'))?.state).toBe('open')
  })

  test('an actor whose lease is lost is dropped from memory (another instance may hold it now)', async () => {
    await runtime.stop()
    // Every take of t1's lease by this instance (the spawn's, then each renewal) and its answer.
    const takes: boolean[] = []
    const coordination = {
      ...env.coordination,
      async acquireLease(name: string, owner: string, ttlMs: number) {
        const ok = await env.coordination.acquireLease(name, owner, ttlMs)
        if (name === 'actor:ticket:t1' && owner === 'test-instance') takes.push(ok)
        return ok
      },
    }
    const rt = makeRuntime({ store: env.store, coordination }, clock, { leaseTtlMs: 600 })
    rt.register('ticket', { machine: ticketMachine, version: 1 })
    await rt.start()
    runtime = rt
    await rt.spawn('ticket', 't1', { id: 't1' })
    // Renewals keep it while nobody interferes: two of them, each granted.
    await until('two renewals', () => takes.length >= 3, WAIT_MS)
    expect(takes.every(Boolean)).toBe(true)
    expect(await env.coordination.acquireLease('actor:ticket:t1', 'thief', 60_000)).toBe(false)
    // Someone else ends up with it (e.g. our renewals stalled past the ttl).
    await env.coordination.releaseLease('actor:ticket:t1', 'test-instance')
    expect(await env.coordination.acquireLease('actor:ticket:t1', 'thief', 60_000)).toBe(true)
    await until('the actor to be dropped on the failed renewal', () => !rt.isLive('ticket', 't1'), WAIT_MS)
    expect(takes.at(-1)).toBe(false)
    expect(await env.coordination.leaseOwner('actor:ticket:t1')).toBe('thief')
  })

  test('passivateIdle drops actors idle for their idleMs', async () => {
    await runtime.spawn('ticket', 'a', { id: 'a' })
    await runtime.spawn('ticket', 'b', { id: 'b' })
    expect(await runtime.passivateIdle()).toBe(0) // idle for less than the 60 s default
    expect(await runtime.passivateIdle(true)).toBe(2)
    expect(runtime.liveCount).toBe(0)
  })

  test('a machine whose action throws is stored in its error state and answers from the store after', async () => {
    await runtime.stop()
    const rt = makeRuntime({ store: env.store, coordination: env.coordination }, clock)
    const failing = ticketMachine.provide({
      actions: {
        onFired: () => {
          throw new Error('effect wiring bug')
        },
      },
    })
    rt.register('ticket', { machine: failing, version: 1, deadlines: ticketDeadlines })
    await rt.start()
    runtime = rt
    await rt.spawn('ticket', 'e1', { id: 'e1' })
    await rt.send('ticket', 'e1', { type: 'arm', name: 'x', at: T0 })
    const failed = await rt.send('ticket', 'e1', { type: 'timer.due', at: T0, name: 'x' })
    expect(failed.status).toBe('error')
    expect(await rt.read('ticket', 'e1')).toMatchObject({ status: 'error', error: 'Error: effect wiring bug', deadlines: [] })
    await until('the failed actor to leave memory', () => !rt.isLive('ticket', 'e1'), WAIT_MS)
    expect((await rt.send('ticket', 'e1', { type: 'ping' })).status).toBe('error')
  })

  test('spawn, send and read: existing ids, missing actors, spawn-on-send, final states', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    await expect(runtime.spawn('ticket', 't1', { id: 't1' })).rejects.toBeInstanceOf(ActorExistsError)
    await runtime.passivate('ticket', 't1')
    await expect(runtime.spawn('ticket', 't1', { id: 't1' })).rejects.toBeInstanceOf(ActorExistsError)
    await expect(runtime.send('ticket', 'nope', { type: 'ping' })).rejects.toBeInstanceOf(ActorNotFoundError)
    expect(await runtime.read('ticket', 'nope')).toBeNull()
    const spawned = await runtime.send('ticket', 'new', { type: 'push', n: 5 }, { input: { id: 'new' } })
    expect(spawned.context).toMatchObject({ id: 'new', log: [5] })
    const closed = await runtime.send('ticket', 't1', { type: 'close' })
    expect(closed.status).toBe('done')
    await until('a finished actor to leave memory', () => !runtime.isLive('ticket', 't1'), WAIT_MS)
    const after = await runtime.send('ticket', 't1', { type: 'push', n: 1 })
    expect(after).toMatchObject({ value: 'closed', status: 'done' })
    expect(runtime.isLive('ticket', 't1')).toBe(false)
    expect((await runtime.list('ticket')).map((r) => r.resourceId)).toEqual(['new', 't1'])
    expect((await runtime.list('ticket', { state: 'closed' })).map((r) => r.resourceId)).toEqual(['t1'])
  })
})
