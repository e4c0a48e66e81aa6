/** runDue waits for the effects its wake-ups start, so "advance, then read" sees their outcome. */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { assign, fromPromise, setup } from 'xstate'
import type { ActorRuntime } from '../../actors/runtime'
import { ManualClock } from '../../src/clock'
import { type Env, makeRuntime, openEnv, removeDir } from './support'

const T0 = Date.UTC(2026, 0, 1)

const chore = setup({
  types: { context: {} as { dueAt: number; done: number }, events: {} as { type: 'timer.due'; at: number; name?: string }, input: {} as { dueAt: number } },
  actors: { work: fromPromise(async () => 0) },
}).createMachine({
  id: 'chore',
  context: ({ input }) => ({ dueAt: input.dueAt, done: 0 }),
  initial: 'waiting',
  states: {
    waiting: {
      description: 'Waits for its deadline.',
      on: { 'timer.due': { guard: ({ context, event }) => event.at >= context.dueAt, target: 'working' } },
    },
    working: {
      description: 'Runs its effect.',
      invoke: { src: 'work', onDone: { target: 'finished', actions: assign({ done: ({ context }) => context.done + 1 }) } },
    },
    finished: { description: 'Done.' },
  },
})

let env: Env
let runtime: ActorRuntime
let clock: ManualClock
const worked: number[] = []

beforeEach(async () => {
  env = await openEnv()
  clock = new ManualClock(T0)
  runtime = makeRuntime(env, clock)
  const machine = chore.provide({
    actors: {
      work: fromPromise(async () => {
        await Bun.sleep(40) // slower than a timer delivery: runDue must wait for it
        worked.push(Date.now())
        return 1
      }),
    },
  })
  runtime.register('chore', { machine, version: 1, deadlines: (s) => (s.value === 'waiting' ? [{ name: 'due', at: s.context.dueAt }] : []) })
  await runtime.start()
})
afterEach(async () => {
  await runtime.stop()
  await env.close()
  removeDir(env.dir)
})

test('after runDue the effects started by the delivered timers have run and are stored', async () => {
  await runtime.spawn('chore', 'c1', { dueAt: T0 + 1000 })
  await runtime.spawn('chore', 'c2', { dueAt: T0 + 1000 })
  clock.advance(1000)
  expect(await runtime.runDue()).toBe(2)
  expect(worked).toHaveLength(2)
  for (const id of ['c1', 'c2']) {
    const rec = await runtime.read('chore', id)
    expect(rec?.state).toBe('finished')
    expect(rec?.pendingWork).toBe(false)
  }
})
