/**
 * ActorRuntime.ask: the event is sent and the answer says whether the chart applied it or refused
 * it, with the refusal this very event recorded — never an earlier one, nor a concurrent ask's —
 * on the instance that holds the actor and through a forward from one that does not.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { assign, setup } from 'xstate'
import type { ActorRuntime } from '../../actors/runtime'
import { type Refusal, type RefusalParams, refusalOf } from '../../machines/refusal'
import { ManualClock } from '../../src/clock'
import { type Env, makeRuntime, openEnv, removeDir } from './support'

const T0 = Date.UTC(2026, 0, 1)

type DoorEvent = { type: 'open' | 'close' | 'lock' | 'unlock' | 'knock' | 'remove'; at: number }

/** A door: refuses moves that do not apply with recordRefusal; `knock` has no handler when locked. */
const doorMachine = setup({
  types: { context: {} as { lastRefusal: Refusal | null; moves: number }, events: {} as DoorEvent },
  actions: {
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
    count: assign({ moves: ({ context }) => context.moves + 1 }),
  },
}).createMachine({
  id: 'door',
  context: { lastRefusal: null, moves: 0 },
  initial: 'closed',
  states: {
    closed: {
      on: {
        open: { target: 'opened', actions: 'count' },
        lock: { target: 'locked', actions: 'count' },
        close: { actions: { type: 'recordRefusal', params: { state: 'closed', message: 'the door is closed already' } } },
        knock: { actions: 'count' },
        remove: 'gone',
      },
    },
    opened: {
      on: {
        close: { target: 'closed', actions: 'count' },
        open: { actions: { type: 'recordRefusal', params: { state: 'opened', message: 'the door is open already' } } },
        lock: { actions: { type: 'recordRefusal', params: { state: 'opened', message: 'close the door before locking it' } } },
      },
    },
    locked: {
      on: {
        unlock: { target: 'closed', actions: 'count' },
        open: { actions: { type: 'recordRefusal', params: { state: 'locked', message: 'the door is locked' } } },
      },
    },
    gone: { type: 'final' },
  },
})

const clock = new ManualClock(T0)
const ev = (type: DoorEvent['type']): DoorEvent => ({ type, at: clock.now() })

function doorRuntime(env: Env, instanceId: string): ActorRuntime {
  const rt = makeRuntime(env, clock, { instanceId })
  rt.register('door', { machine: doorMachine, version: 1 })
  return rt
}

describe('ask on the instance that holds the actor', () => {
  let env: Env
  let rt: ActorRuntime
  beforeEach(async () => {
    env = await openEnv()
    rt = doorRuntime(env, 'instance-a')
    await rt.start()
    await rt.spawn('door', 'd', undefined)
  })
  afterEach(async () => {
    await rt.stop()
    await env.close()
    removeDir(env.dir)
  })

  test('an applied event answers ok with the snapshot, as stored', async () => {
    const asked = await rt.ask('door', 'd', ev('open'))
    expect(asked.ok).toBe(true)
    expect(asked.snapshot.value).toBe('opened')
    expect((await rt.read('door', 'd'))!.state).toBe('opened')
  })

  test('a refused event answers its refusal; the state is unchanged', async () => {
    const asked = await rt.ask('door', 'd', ev('close'))
    expect(asked).toMatchObject({ ok: false, refusal: { event: 'close', state: 'closed', message: 'the door is closed already', at: T0 } })
    expect(asked.snapshot.value).toBe('closed')
  })

  test('the same refusal twice at one instant is reported twice; a refusal recorded before does not taint an applied event', async () => {
    // Identical refusals (same event, state, message and instant): a before/after comparison of
    // their contents would miss the second.
    expect((await rt.ask('door', 'd', ev('close'))).ok).toBe(false)
    expect((await rt.ask('door', 'd', ev('close'))).ok).toBe(false)
    const applied = await rt.ask('door', 'd', ev('open'))
    expect(applied.ok).toBe(true)
    // The earlier refusal is still in the context; it is not this event's.
    expect((applied.snapshot.context as { lastRefusal: Refusal }).lastRefusal.event).toBe('close')
  })

  test('concurrent asks each get their own outcome, in the order they were made', async () => {
    const [first, second, third, fourth] = await Promise.all([rt.ask('door', 'd', ev('open')), rt.ask('door', 'd', ev('open')), rt.ask('door', 'd', ev('lock')), rt.ask('door', 'd', ev('close'))])
    expect(first).toMatchObject({ ok: true })
    expect(second).toMatchObject({ ok: false, refusal: { event: 'open', state: 'opened', message: 'the door is open already' } })
    expect(third).toMatchObject({ ok: false, refusal: { event: 'lock', state: 'opened', message: 'close the door before locking it' } })
    expect(fourth).toMatchObject({ ok: true })
    expect(fourth.snapshot.value).toBe('closed')
  })

  test('an event no handler takes, or sent to a finished actor, is refused as not applying', async () => {
    await rt.ask('door', 'd', ev('lock'))
    expect(await rt.ask('door', 'd', ev('knock'))).toMatchObject({ ok: false, refusal: { event: 'knock', state: 'locked', message: 'knock does not apply while locked' } })
    // An event the state takes without moving is applied.
    await rt.ask('door', 'd', ev('unlock'))
    expect((await rt.ask('door', 'd', ev('knock'))).ok).toBe(true)
    expect((await rt.ask('door', 'd', ev('remove'))).ok).toBe(true)
    expect(await rt.ask('door', 'd', ev('open'))).toMatchObject({ ok: false, refusal: { event: 'open', state: 'gone', message: 'open does not apply while gone' } })
  })

  test('send still answers the snapshot alone', async () => {
    const snap = await rt.send('door', 'd', ev('close'))
    expect(snap.value).toBe('closed')
    expect((snap.context as { lastRefusal: Refusal }).lastRefusal.event).toBe('close')
  })
})

describe('ask from an instance that does not hold the actor (forwarded to its owner)', () => {
  let env: Env
  let a: ActorRuntime
  let b: ActorRuntime
  beforeEach(async () => {
    env = await openEnv()
    // Two runtimes on one store and one coordination (its leases and pub/sub), as two processes on
    // one Redis and one database.
    a = doorRuntime(env, 'instance-a')
    b = doorRuntime(env, 'instance-b')
    await a.start()
    await b.start()
    await a.spawn('door', 'd', undefined)
  })
  afterEach(async () => {
    await a.stop()
    await b.stop()
    await env.close()
    removeDir(env.dir)
  })

  test('the owner judges the event and the verdict comes back with the snapshot', async () => {
    const applied = await b.ask('door', 'd', ev('open'))
    expect(applied.ok).toBe(true)
    expect(applied.snapshot.value).toBe('opened')
    const refused = await b.ask('door', 'd', ev('open'))
    expect(refused).toMatchObject({ ok: false, refusal: { event: 'open', state: 'opened', message: 'the door is open already' } })
    expect(a.isLive('door', 'd')).toBe(true)
    expect(b.isLive('door', 'd')).toBe(false)
  })

  test('concurrent asks from both instances each get their own outcome', async () => {
    const [fromA, fromB] = await Promise.all([a.ask('door', 'd', ev('lock')), b.ask('door', 'd', ev('lock'))])
    const outcomes = [fromA, fromB]
    // Exactly one locks the door; the other is refused in the state the first left it in.
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1)
    expect(outcomes.find((o) => !o.ok)).toMatchObject({ ok: false, refusal: { event: 'lock', state: 'locked', message: 'lock does not apply while locked' } })
    expect((await a.read('door', 'd'))!.state).toBe('locked')
  })
})
