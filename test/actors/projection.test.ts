/**
 * A kind's projection (`persisted`) is a second write after the stored snapshot: an instance that
 * died between the two (or whose projection failed) left the projection behind its actor. Resuming
 * the actor from the store brings the projection in step, even when the event that resumed it
 * changes nothing (an actor that already ended never changes again).
 */
import { afterEach, expect, test } from 'bun:test'
import { assign, setup } from 'xstate'
import { ManualClock } from '../../src/clock'
import { type Env, makeRuntime, openEnv, removeDir } from './support'

const counterMachine = setup({
  types: { context: {} as { n: number }, events: {} as { type: 'inc' } | { type: 'noop' } },
}).createMachine({
  id: 'counter',
  context: { n: 0 },
  on: { inc: { actions: assign({ n: ({ context }) => context.n + 1 }) } },
})

let env: Env | null = null
afterEach(async () => {
  await env?.close()
  if (env) removeDir(env.dir)
  env = null
})

test('a projection left behind its stored snapshot is brought in step when the actor is resumed', async () => {
  env = await openEnv()
  const first = makeRuntime(env, new ManualClock(0), { instanceId: 'first' })
  let failing = false
  const projectedByFirst: number[] = []
  first.register('counter', {
    machine: counterMachine,
    version: 1,
    persisted: async (_id, snapshot) => {
      // The instance dies between the snapshot's write and the projection's.
      if (failing) throw new Error('killed before projecting')
      projectedByFirst.push(snapshot.context.n)
    },
  })
  await first.start()
  await first.spawn('counter', 'c1', undefined)
  await first.send('counter', 'c1', { type: 'inc' })
  failing = true
  await first.send('counter', 'c1', { type: 'inc' })
  expect(projectedByFirst).toEqual([0, 1])
  await first.stop()

  const projected: number[] = []
  const second = makeRuntime(env, new ManualClock(0), { instanceId: 'second' })
  second.register('counter', { machine: counterMachine, version: 1, persisted: async (_id, snapshot) => void projected.push(snapshot.context.n) })
  await second.start()
  // An event that changes nothing: only the resume can project the stored n = 2.
  await second.send('counter', 'c1', { type: 'noop' })
  expect(projected).toEqual([2])
  await second.stop()
})
