import { expect, test } from 'bun:test'
import { createActor, createMachine } from 'xstate'
import { idleOrTimeout } from '../../actors/idle'

test('waiting on an actor that already finished resolves at once, without an unhandled error', async () => {
  const actor = createActor(createMachine({ initial: 'a', states: { a: { type: 'final' } } }))
  actor.start() // done and stopped: subscribing now calls `complete` synchronously, inside subscribe()
  expect(actor.getSnapshot().status).toBe('done')
  const errors: unknown[] = []
  const onError = (e: unknown) => errors.push(e)
  process.on('uncaughtException', onError)
  try {
    const started = Date.now()
    await idleOrTimeout({ busy: () => true, actor }, 2_000)
    await new Promise((r) => setTimeout(r, 10)) // xstate reports a throwing observer on a timer
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(errors).toEqual([])
  } finally {
    process.off('uncaughtException', onError)
  }
})
