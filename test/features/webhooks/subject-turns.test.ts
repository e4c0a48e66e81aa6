/**
 * A delivery's turn (src/features/webhooks/subject-turns.ts): a predecessor owed here but not
 * started yet (its record still being committed) is waited for until it starts and settles, or
 * until it is forgotten (its commit failed); the wait never goes ahead while it is owed.
 */
import { expect, test } from 'bun:test'
import { SubjectTurns } from '../../../src/features/webhooks/subject-turns'

const never = () => false

test('a predecessor about to start here is waited for until it starts and settles', async () => {
  const turns = new SubjectTurns()
  const owed = new Set(['a'])
  let went = false
  const waiting = turns
    .wait(['a'], async (id) => owed.has(id) && ('here' as const), never)
    .then((ok) => {
      went = ok
    })
  await Bun.sleep(0)
  expect(went).toBe(false)
  const { promise: work, resolve: finish } = Promise.withResolvers<void>()
  turns.track('a', work)
  await Bun.sleep(0)
  expect(went).toBe(false)
  owed.delete('a')
  finish()
  await waiting
  expect(went).toBe(true)
})

test('a predecessor forgotten (its commit failed) lets the wait go on', async () => {
  const turns = new SubjectTurns()
  const owed = new Set(['b'])
  const waiting = turns.wait(['b'], async (id) => owed.has(id) && ('here' as const), never)
  await Bun.sleep(0)
  owed.delete('b')
  turns.forget('b')
  expect(await waiting).toBe(true)
})
