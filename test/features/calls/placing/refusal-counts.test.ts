/**
 * Calls refused at capacity, per workspace (src/features/calls/placing/refusal-counts.ts), on the embedded
 * store: counted in memory and written only when flushed; two instances' counts and a restarted
 * instance's add up; a crash loses only what was not flushed; a call ringing in counts for the
 * workspace holding the number it rang, looked up once per number at the flush.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { ManualClock } from '../../../../src/clock'
import { type CallRefusalDoc, callRefusalsSpec, REFUSED_CALLS_KEPT, RefusalCounts } from '../../../../src/features/calls/placing/refusal-counts'
import { createLogger } from '../../../../src/logger'
import type { Collection } from '../../../../src/store/port'
import { type Env, openEnv, removeDir } from '../../../actors/support'

const HOUR = 3_600_000
const T0 = Date.parse('2026-12-07T10:15:00.000Z')

let env: Env
let docs: Collection<CallRefusalDoc>
let clock: ManualClock
let lookups: string[]

beforeEach(async () => {
  env = await openEnv()
  docs = await env.store.collection<CallRefusalDoc>(callRefusalsSpec)
  clock = new ManualClock(T0)
  lookups = []
})
afterEach(async () => {
  await env.close()
  removeDir(env.dir)
})

const counts = (instance: string) =>
  new RefusalCounts({
    refusals: docs,
    clock,
    instance,
    workspaceOfNumber: async (number) => {
      lookups.push(number)
      return number === '+14155550100' ? 'ws_a' : null
    },
    logger: createLogger('silent'),
  })
const totals = async (c: RefusalCounts, ws: string) => (await c.hours(ws, T0 - 24 * HOUR, T0 + 24 * HOUR)).map((h) => [new Date(h.hour).toISOString(), h.refused])

test('refusals are kept in memory until flushed, then read per workspace and hour', async () => {
  const c = counts('inst_1')
  c.refused('ws_a', 'outbound')
  c.refused('ws_a', 'web')
  c.refused('ws_b', 'outbound')
  expect(await docs.count({})).toBe(0)
  clock.advance(HOUR)
  c.refused('ws_a', 'outbound', 'call_1')
  await c.flush()
  expect(await docs.count({})).toBe(3)
  const hours = await c.hours('ws_a', T0 - HOUR, T0 + 2 * HOUR)
  expect(hours).toEqual([
    { hour: Date.parse('2026-12-07T10:00:00.000Z'), refused: 2, directions: { outbound: 1, inbound: 0, web: 1 }, calls: [] },
    { hour: Date.parse('2026-12-07T11:00:00.000Z'), refused: 1, directions: { outbound: 1, inbound: 0, web: 0 }, calls: ['call_1'] },
  ])
  expect(await totals(c, 'ws_b')).toEqual([['2026-12-07T10:00:00.000Z', 1]])
})

test("two instances' counts and a restarted instance's add up; a crash loses only what was not flushed", async () => {
  const one = counts('inst_1')
  const two = counts('inst_2')
  for (let i = 0; i < 5; i++) one.refused('ws_a', 'outbound')
  two.refused('ws_a', 'web')
  await one.stop()
  await two.flush()
  expect(await totals(two, 'ws_a')).toEqual([['2026-12-07T10:00:00.000Z', 6]])
  // inst_1 boots again (a new id): its earlier counts stay and its new ones add to them.
  const again = counts('inst_3')
  again.refused('ws_a', 'outbound')
  await again.flush()
  // inst_2 takes two more, flushes one of them, and dies before the next flush.
  two.refused('ws_a', 'web')
  await two.flush()
  two.refused('ws_a', 'web')
  expect(await totals(counts('inst_4'), 'ws_a')).toEqual([['2026-12-07T10:00:00.000Z', 8]])
})

test('a call ringing in counts for the workspace that holds the number, looked up once per number at the flush', async () => {
  const c = counts('inst_1')
  for (let i = 0; i < 3; i++) c.refusedAt('+14155550100')
  c.refusedAt('+14155550199')
  expect(lookups).toEqual([])
  await c.flush()
  expect(lookups).toEqual(['+14155550100', '+14155550199'])
  const [hour] = await c.hours('ws_a', T0 - HOUR, T0 + HOUR)
  expect(hour).toMatchObject({ refused: 3, directions: { outbound: 0, inbound: 3, web: 0 } })
  expect(await docs.count({})).toBe(1)
})

test('a write that fails is written again at the next flush; call ids stop at the cap', async () => {
  let failing = true
  const flaky = Object.assign(Object.create(docs) as Collection<CallRefusalDoc>, {
    upsert: (doc: CallRefusalDoc) => (failing ? Promise.reject(new Error('disk full')) : docs.upsert(doc)),
  })
  const c = new RefusalCounts({ refusals: flaky, clock, instance: 'inst_1', workspaceOfNumber: async () => null, logger: createLogger('silent') })
  for (let i = 0; i < REFUSED_CALLS_KEPT + 5; i++) c.refused('ws_a', 'outbound', `call_${i}`)
  await c.flush()
  expect(await docs.count({})).toBe(0)
  failing = false
  await c.flush()
  const [hour] = await c.hours('ws_a', T0 - HOUR, T0 + HOUR)
  expect([hour!.refused, hour!.calls.length]).toEqual([REFUSED_CALLS_KEPT + 5, REFUSED_CALLS_KEPT])
})
