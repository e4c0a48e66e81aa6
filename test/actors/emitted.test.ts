/**
 * Domain events a chart emits (`emit()`) leave through the kind's `emitted` hook: once per event
 * in the normal course, stored with the snapshot that emitted them, and handed over at the next
 * boot when the process died (or the hook failed) before they were — or by another instance that
 * is running, once it finds them — with the same ids, so the hand-over can be made idempotent.
 */
import { afterEach, expect, test } from 'bun:test'
import { assign, emit, setup } from 'xstate'
import { ManualClock } from '../../src/clock'
import { until } from '../support/until'
import { type Env, makeRuntime, openEnv, removeDir, WAIT_MS } from './support'

const bellMachine = setup({
  types: { context: {} as { rings: number }, events: {} as { type: 'ring' } | { type: 'quiet' }, emitted: {} as { type: 'bell.rang'; n: number } },
}).createMachine({
  id: 'bell',
  context: { rings: 0 },
  on: {
    ring: { actions: [assign({ rings: ({ context }) => context.rings + 1 }), emit(({ context }) => ({ type: 'bell.rang' as const, n: context.rings }))] },
    // An emit without any change of state is stored too.
    quiet: { actions: emit({ type: 'bell.rang' as const, n: -1 }) },
  },
})

let env: Env | null = null
afterEach(async () => {
  await env?.close()
  if (env) removeDir(env.dir)
  env = null
})

test('emitted events reach the hook once, in order, with stable ids', async () => {
  env = await openEnv()
  const seen: [string, unknown, string][] = []
  const runtime = makeRuntime(env, new ManualClock(0))
  const bells = runtime.register('bell', { machine: bellMachine, version: 1, emitted: async (id, event, eventId) => void seen.push([id, event, eventId]) })
  await runtime.start()
  await bells.spawn('b1', undefined)
  await bells.send('b1', { type: 'ring' })
  await bells.send('b1', { type: 'ring' })
  await bells.send('b1', { type: 'quiet' })
  expect(seen).toEqual([
    ['b1', { type: 'bell.rang', n: 1 }, 'bell:b1:1'],
    ['b1', { type: 'bell.rang', n: 2 }, 'bell:b1:2'],
    ['b1', { type: 'bell.rang', n: -1 }, 'bell:b1:3'],
  ])
  const stored = await env.store.collection<any>({ name: 'actor_snapshots', indexes: [] })
  expect(await stored.get('bell:b1')).toMatchObject({ outbox: [], hasOutbox: false, emitSeq: 3 })
  await runtime.stop()
})

test('events not handed over (the hook failed, then the process stopped) are handed over at the next boot, same ids', async () => {
  env = await openEnv()
  const first = makeRuntime(env, new ManualClock(0))
  first.register('bell', {
    machine: bellMachine,
    version: 1,
    emitted: async () => {
      throw new Error('bus down')
    },
  })
  await first.start()
  const bells = { send: (id: string, e: { type: 'ring' }) => first.send('bell', id, e) }
  await first.spawn('bell', 'b2', undefined)
  await bells.send('b2', { type: 'ring' })
  await bells.send('b2', { type: 'ring' })
  await first.stop()

  const seen: string[] = []
  const second = makeRuntime(env, new ManualClock(0))
  second.register('bell', { machine: bellMachine, version: 1, emitted: async (_id, _e, eventId) => void seen.push(eventId) })
  await second.start()
  expect(seen).toEqual(['bell:b2:1', 'bell:b2:2'])
  // Numbering goes on from where it was.
  await second.send('bell', 'b2', { type: 'ring' })
  expect(seen).toEqual(['bell:b2:1', 'bell:b2:2', 'bell:b2:3'])
  await second.stop()
})

test('events another instance stored and did not hand over are handed over by a running one, same ids', async () => {
  env = await openEnv()
  const seen: string[] = []
  const survivor = makeRuntime(env, new ManualClock(0), { instanceId: 'survivor' })
  survivor.register('bell', { machine: bellMachine, version: 1, emitted: async (_id, _e, eventId) => void seen.push(eventId) })
  await survivor.start()
  const failing = makeRuntime(env, new ManualClock(0), { instanceId: 'failing' })
  failing.register('bell', {
    machine: bellMachine,
    version: 1,
    emitted: async () => {
      throw new Error('Redis did not answer acquireLease within 2 s')
    },
  })
  await failing.start()
  await failing.spawn('bell', 'b3', undefined)
  await failing.send('bell', 'b3', { type: 'ring' })
  expect(seen).toEqual([])
  // Its actors released (as a crashed instance's leases lapse): the survivor resumes what is pending.
  await failing.stop()
  await until('the survivor handed the outbox over', () => seen.length > 0, WAIT_MS)
  expect(seen).toEqual(['bell:b3:1'])
  const stored = await env.store.collection<any>({ name: 'actor_snapshots', indexes: [] })
  expect(await stored.get('bell:b3')).toMatchObject({ outbox: [], hasOutbox: false })
  await survivor.stop()
})
