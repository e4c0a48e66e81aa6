import { expect, test } from 'bun:test'
import { createActor, createMachine } from 'xstate'
import { idleOrTimeout } from '../../actors/idle'
import { ManualClock } from '../../src/clock'

test('waiting on an actor that already finished resolves at once, without an unhandled error', async () => {
  const actor = createActor(createMachine({ initial: 'a', states: { a: { type: 'final' } } }))
  actor.start() // done and stopped: subscribing now calls `complete` synchronously, inside subscribe()
  expect(actor.getSnapshot().status).toBe('done')
  const errors: unknown[] = []
  const onError = (e: unknown) => errors.push(e)
  process.on('uncaughtException', onError)
  try {
    // "At once": settled before any timer could run, so not by its own (long) timeout.
    const first = await Promise.race([idleOrTimeout({ busy: () => true, actor }, 60_000).then(() => 'resolved'), new Promise((r) => setTimeout(r, 0)).then(() => 'a timer ran first')])
    expect(first).toBe('resolved')
    await new Promise((r) => setTimeout(r, 10)) // xstate reports a throwing observer on a timer
    expect(errors).toEqual([])
  } finally {
    process.off('uncaughtException', onError)
  }
})

test('an actor that stays busy is waited on until the timeout passes on the clock, and no longer', async () => {
  const actor = createActor(createMachine({ initial: 'a', states: { a: {} } }))
  actor.start()
  const clock = new ManualClock(0)
  let over = false
  const waiting = idleOrTimeout({ busy: () => true, actor }, 5_000, () => false, clock).then(() => {
    over = true
  })
  clock.advance(4_999)
  await Promise.resolve()
  expect(over).toBe(false)
  clock.advance(1)
  await new Promise((r) => setImmediate(r))
  expect(over).toBe(true)
  await waiting
  actor.stop()
})
