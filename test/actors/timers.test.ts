import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { assign, setup } from 'xstate'
import { timerId } from '../../actors/deadlines'
import type { ActorRuntime } from '../../actors/runtime'
import { ManualClock, systemClock } from '../../src/clock'
import { until } from '../support/until'
import { type Env, makeRuntime, openEnv, removeDir, type TicketContext, ticketDeadlines, ticketMachine } from './support'

const T0 = Date.UTC(2026, 0, 1)
const HOUR = 3_600_000

/** The timers the coordination store holds, read by claiming far in the future (claims are dropped again by rescheduling). */
async function timers(env: Env): Promise<Record<string, number>> {
  const claimed = await env.coordination.claimDueTimers(Number.MAX_SAFE_INTEGER, 1000, 60_000)
  for (const t of claimed) await env.coordination.scheduleTimer({ id: t.id, dueAt: t.dueAt, payload: t.payload })
  return Object.fromEntries(claimed.map((t) => [t.id, t.dueAt]))
}

describe('deadlines and durable timers', () => {
  let env: Env
  let runtime: ActorRuntime
  let clock: ManualClock
  let firedEffects: string[]

  beforeEach(async () => {
    env = await openEnv()
    clock = new ManualClock(T0)
    firedEffects = []
    runtime = makeRuntime(env, clock)
    const machine = ticketMachine.provide({
      actions: { onFired: ({ context }) => void firedEffects.push(context.id) },
    })
    runtime.register('ticket', { machine, version: 1, deadlines: ticketDeadlines })
    await runtime.start()
  })
  afterEach(async () => {
    await runtime.stop()
    await env.close()
    removeDir(env.dir)
  })

  test('deadlines become timers: scheduled, moved, cancelled', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    expect(await timers(env)).toEqual({})
    await runtime.send('ticket', 't1', { type: 'arm', name: 'a', at: T0 + HOUR })
    await runtime.send('ticket', 't1', { type: 'arm', name: 'b', at: T0 + 2 * HOUR })
    expect(await timers(env)).toEqual({ [timerId('ticket', 't1', 'a')]: T0 + HOUR, [timerId('ticket', 't1', 'b')]: T0 + 2 * HOUR })
    await runtime.send('ticket', 't1', { type: 'arm', name: 'a', at: T0 + 30 * 60_000 }) // earlier
    await runtime.send('ticket', 't1', { type: 'arm', name: 'b', at: T0 + 5 * HOUR }) // later
    expect(await timers(env)).toEqual({ [timerId('ticket', 't1', 'a')]: T0 + 30 * 60_000, [timerId('ticket', 't1', 'b')]: T0 + 5 * HOUR })
    await runtime.send('ticket', 't1', { type: 'disarm', name: 'a' })
    expect(await timers(env)).toEqual({ [timerId('ticket', 't1', 'b')]: T0 + 5 * HOUR })
    expect(await runtime.read('ticket', 't1')).toMatchObject({ deadlines: [{ name: 'b', at: T0 + 5 * HOUR }], nextDeadlineAt: T0 + 5 * HOUR })
    await runtime.send('ticket', 't1', { type: 'close' }) // a finished actor waits for nothing
    expect(await timers(env)).toEqual({})
  })

  test('runDue with a manual clock fires exactly the due timers, once', async () => {
    for (const [id, offset] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const) {
      await runtime.spawn('ticket', id, { id })
      await runtime.send('ticket', id, { type: 'arm', name: 'x', at: T0 + offset * HOUR })
    }
    await runtime.passivateIdle(true) // timers must wake actors that are not in memory
    expect(await runtime.runDue(clock.advance(2 * HOUR))).toBe(2)
    expect(firedEffects.sort()).toEqual(['a', 'b'])
    expect((await runtime.read('ticket', 'c'))?.deadlines).toHaveLength(1)
    expect(await runtime.runDue()).toBe(0) // nothing else due; nothing fires twice
    expect(await runtime.runDue(clock.advance(HOUR))).toBe(1)
    expect(firedEffects.sort()).toEqual(['a', 'b', 'c'])
    expect(await env.coordination.pendingTimers()).toBe(0)
    const c = await runtime.read('ticket', 'c')
    expect((c!.snapshot as { context: TicketContext }).context.fired).toEqual(['x'])
  })

  test('deadlines that fall due during runDue (set by a firing) are delivered before it resolves', async () => {
    // A relay: each firing moves to the next step, whose deadline is already due.
    const relay = setup({
      types: { context: {} as { step: number; at: number }, events: {} as { type: 'timer.due'; at: number; name?: string } },
    }).createMachine({
      context: { step: 0, at: T0 },
      on: {
        'timer.due': {
          guard: ({ context, event }) => event.name === `step${context.step}` && event.at >= context.at,
          actions: assign({ step: ({ context }) => context.step + 1 }),
        },
      },
    })
    // Alone on the coordination store: the suite's runtime does not run `relay`, so its pump would
    // claim these timers, leave them for another instance and hold them for a claim lease.
    await runtime.stop()
    const rt2 = makeRuntime(env, clock, { instanceId: 'relay' })
    rt2.register('relay', {
      machine: relay,
      version: 1,
      deadlines: (snap) => (snap.context.step < 3 ? [{ name: `step${snap.context.step}`, at: snap.context.at }] : []),
    })
    await rt2.start()
    try {
      await rt2.spawn('relay', 'r1', {})
      expect(await rt2.runDue(T0)).toBe(3)
      expect((await rt2.read('relay', 'r1'))?.snapshot).toMatchObject({ context: { step: 3 } })
      expect(await env.coordination.pendingTimers()).toBe(0)
    } finally {
      await rt2.stop()
    }
  })

  test('an early wake-up is ignored and the timer re-armed; a stale one is ignored and dropped', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    await runtime.send('ticket', 't1', { type: 'arm', name: 'x', at: T0 + HOUR })
    // Simulates a timer delivered too early (e.g. a replaced deadline's old timer).
    const early = await runtime.send('ticket', 't1', { type: 'timer.due', at: T0 + 10, name: 'x' })
    expect((early.context as TicketContext).fired).toEqual([])
    expect(await timers(env)).toEqual({ [timerId('ticket', 't1', 'x')]: T0 + HOUR })
    await runtime.runDue(clock.advance(HOUR))
    expect(firedEffects).toEqual(['t1'])
    // Delivered again (at-least-once): the guard makes it a no-op.
    const again = await runtime.send('ticket', 't1', { type: 'timer.due', at: clock.now(), name: 'x' })
    expect((again.context as TicketContext).fired).toEqual(['x'])
    expect(firedEffects).toEqual(['t1'])
    expect(await env.coordination.pendingTimers()).toBe(0)
  })

  test('a timer whose actor was never stored is dropped', async () => {
    await env.coordination.scheduleTimer({ id: timerId('ticket', 'ghost', 'x'), dueAt: T0, payload: { kind: 'ticket', id: 'ghost', name: 'x', at: T0 } })
    expect(await runtime.runDue(T0)).toBe(1)
    expect(await env.coordination.pendingTimers()).toBe(0)
    expect(await runtime.read('ticket', 'ghost')).toBeNull()
  })

  test('with the system clock the pump wakes for a timer due before its next poll', async () => {
    const env2 = await openEnv()
    const fired: string[] = []
    // Poll interval far longer than the deadline: only the early wake-up can deliver it in time.
    const rt = makeRuntime(env2, systemClock, { timers: { pollMs: 60_000 } })
    rt.register('ticket', {
      machine: ticketMachine.provide({ actions: { onFired: ({ context }) => void fired.push(context.id) } }),
      version: 1,
      deadlines: ticketDeadlines,
    })
    await rt.start()
    try {
      await rt.spawn('ticket', 's1', { id: 's1' })
      await rt.send('ticket', 's1', { type: 'arm', name: 'soon', at: Date.now() + 100 })
      // Up to 10 s for a slow machine: still far short of the 60 s poll.
      await until('the timer to fire without waiting for a poll', () => fired.length === 1, 10_000)
    } finally {
      await rt.stop()
      await env2.close()
      removeDir(env2.dir)
    }
  })
})
