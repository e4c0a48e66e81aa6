/**
 * What the runtime tells metrics: each stored change of state once, with the state stored before
 * (also across passivation and a restart), actors live by kind, passivations, counts by state.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { fromPromise } from 'xstate'
import type { ActorRuntime, Transition } from '../../actors/runtime'
import { ManualClock } from '../../src/clock'
import { until } from '../support/until'
import { type Env, gate, makeRuntime, openEnv, removeDir, ticketDeadlines, ticketMachine, WAIT_MS } from './support'

describe('actor runtime: transitions and counts', () => {
  let env: Env
  let runtime: ActorRuntime
  let heard: Transition[]
  let effectGate: ReturnType<typeof gate<number>>
  const clock = new ManualClock(Date.UTC(2026, 0, 1))

  const boot = async (idleMs?: number) => {
    const rt = makeRuntime(env, clock)
    const machine = ticketMachine.provide({ actors: { effect: fromPromise(async () => effectGate.promise) } })
    rt.register('ticket', { machine, version: 1, deadlines: ticketDeadlines, idleMs })
    rt.register('other', { machine, version: 1 })
    rt.onTransition((t) => heard.push(t))
    await rt.start()
    return rt
  }
  const moves = () => heard.map((t) => `${t.id}:${t.from}->${t.to}`)

  beforeEach(async () => {
    env = await openEnv()
    heard = []
    effectGate = gate()
    runtime = await boot()
  })
  afterEach(async () => {
    effectGate.open(0)
    await runtime.stop()
    await env.close()
    removeDir(env.dir)
  })

  test('each stored change of state is heard once, from the state stored before', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    await runtime.send('ticket', 't1', { type: 'push', n: 1 }) // context only: no transition
    await runtime.send('ticket', 't1', { type: 'work' })
    effectGate.open(0)
    await until('the effect to end', async () => (await runtime.read('ticket', 't1'))?.state === 'open', WAIT_MS)
    expect(moves()).toEqual(['t1:null->open', 't1:open->working', 't1:working->open'])
    expect(heard[0]!.kind).toBe('ticket')
    expect((heard[2]!.context as { worked: number }).worked).toBe(1)
  })

  test('a resumed actor moves on from its stored state, after passivation and after a restart', async () => {
    await runtime.spawn('ticket', 't1', { id: 't1' })
    expect(await runtime.passivate('ticket', 't1')).toBe(true)
    await runtime.send('ticket', 't1', { type: 'push', n: 1 }) // resumed: still open, nothing heard
    await runtime.stop()
    runtime = await boot()
    await runtime.send('ticket', 't1', { type: 'close' })
    expect(moves()).toEqual(['t1:null->open', 't1:open->closed'])
  })

  test('live actors by kind, passivations of unfinished actors only, and counts by state', async () => {
    await runtime.spawn('ticket', 'a', { id: 'a' })
    await runtime.spawn('ticket', 'b', { id: 'b' })
    await runtime.spawn('other', 'c', { id: 'c' })
    expect(Object.fromEntries(runtime.liveByKind())).toEqual({ ticket: 2, other: 1 })
    expect(Object.fromEntries(runtime.passivations())).toEqual({ ticket: 0, other: 0 })

    await runtime.passivate('ticket', 'a')
    // A finished actor leaves memory at once: that is no passivation.
    await runtime.send('other', 'c', { type: 'close' })
    await until('the finished actor to leave memory', () => !runtime.isLive('other', 'c'), WAIT_MS)
    expect(Object.fromEntries(runtime.liveByKind())).toEqual({ ticket: 1, other: 0 })
    expect(Object.fromEntries(runtime.passivations())).toEqual({ ticket: 1, other: 0 })

    expect(await runtime.countInState('ticket', 'open')).toBe(2)
    await runtime.send('ticket', 'b', { type: 'work' })
    expect(await runtime.countInState('ticket', 'open')).toBe(1)
    expect(await runtime.countInState('ticket', 'working')).toBe(1)
    expect(await runtime.countInState('other', 'closed')).toBe(1)
  })
})
