/**
 * Analysis waits for a try's media stream to write its last (MediaEnds): it reads on when the
 * stream announces its end — here or from another instance — and otherwise at a deadline on the
 * service clock, never by polling.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { ManualClock, systemClock } from '../../../../src/clock'
import { MEDIA_SETTLE_MS, MediaEnds } from '../../../../src/features/calls/live/media-ends'
import type { CallTryDoc, CallTryRepo } from '../../../../src/features/calls/records/repository'
import { type Env, openEnv, removeDir } from '../../../actors/support'
import { tryRow } from '../try-row'

const T0 = Date.UTC(2026, 0, 1)

let env: Env
let tries: CallTryRepo
/** How many times the row was read: a wait reads it twice up front and once when it ends. */
let reads = 0

beforeEach(async () => {
  env = await openEnv()
  const inner = await env.store.collection<CallTryDoc>({ name: 'call_tries', indexes: [] })
  reads = 0
  tries = Object.assign(Object.create(inner) as CallTryRepo, {
    get: (id: string) => {
      reads++
      return inner.get(id)
    },
  })
})
afterEach(async () => {
  await env.close()
  removeDir(env.dir)
})

const row = (id: string, media?: 'live' | 'done') => tryRow({ id, media })
const settledWithin = async <T>(p: Promise<T>, ms: number): Promise<T | 'pending'> => Promise.race([p, Bun.sleep(ms).then(() => 'pending' as const)])

test('a try whose stream is not live answers at once', async () => {
  const ends = new MediaEnds({ tries, coordination: env.coordination, clock: new ManualClock(T0) })
  await tries.insert(row('t1', 'done'))
  expect((await ends.settled('t1'))?.media).toBe('done')
  expect(await ends.settled('none')).toBeNull()
})

test('a live stream is waited for until it announces its end', async () => {
  const clock = new ManualClock(T0)
  const ends = new MediaEnds({ tries, coordination: env.coordination, clock })
  await tries.insert(row('t2', 'live'))
  const waiting = ends.settled('t2')
  expect(await settledWithin(waiting, 50)).toBe('pending')
  expect(reads).toBe(2)
  await tries.update('t2', { media: 'done' })
  await ends.ended('t2')
  expect((await waiting)?.media).toBe('done')
  expect(reads).toBe(3)
})

test('the end announced by another instance reaches the wait over the coordination channel', async () => {
  const clock = new ManualClock(T0)
  const here = new MediaEnds({ tries, coordination: env.coordination, clock })
  const there = new MediaEnds({ tries, coordination: env.coordination, clock })
  await here.start()
  try {
    await tries.insert(row('t3', 'live'))
    const waiting = here.settled('t3')
    expect(await settledWithin(waiting, 20)).toBe('pending')
    await tries.update('t3', { media: 'done' })
    await there.ended('t3')
    expect((await waiting)?.media).toBe('done')
  } finally {
    await here.stop()
  }
})

test('under the manual clock the wait ends when the clock reaches its deadline, not before', async () => {
  const clock = new ManualClock(T0)
  const ends = new MediaEnds({ tries, coordination: env.coordination, clock })
  await tries.insert(row('t4', 'live'))
  const waiting = ends.settled('t4')
  await Bun.sleep(10)
  ends.clockMoved(clock.advance(MEDIA_SETTLE_MS - 1))
  expect(await settledWithin(waiting, 20)).toBe('pending')
  ends.clockMoved(clock.advance(1))
  // A stream that never reports: the row as it stands.
  expect((await waiting)?.media).toBe('live')
})

test('under the system clock the deadline is a timer set by the service clock', async () => {
  // A service clock that reads 30 ms short of the deadline as soon as the wait has taken it.
  let calls = 0
  const clock = { ...systemClock, now: () => (calls++ === 0 ? T0 : T0 + MEDIA_SETTLE_MS - 30) }
  const ends = new MediaEnds({ tries, coordination: env.coordination, clock })
  await tries.insert(row('t5', 'live'))
  const waiting = ends.settled('t5')
  expect(await settledWithin(waiting, 5)).toBe('pending')
  expect(await settledWithin(waiting, 2_000)).not.toBe('pending')
  expect(calls).toBe(2)
})
