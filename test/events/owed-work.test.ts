/**
 * Owed work (events/owed-work.ts): items an instance committed are taken over, once, by a survivor
 * when the owner's presence lease is gone, and never while it lives.
 */
import { expect, test } from 'bun:test'
import pino from 'pino'
import { openLocalCoordination } from '../../src/coordination/local'
import { type OwedItem, OwedWork } from '../../src/events/owed-work'
import { openSqliteStore } from '../../src/store/sqlite'

const logger = pino({ level: 'silent' })

interface Job extends OwedItem {
  n: number
}

test('a live owner keeps its items; once its presence lapses one survivor takes each over once', async () => {
  const store = await openSqliteStore(':memory:')
  const coordination = await openLocalCoordination(':memory:')
  const resumed: Record<string, string[]> = { b: [], c: [] }
  const open = (owner: string) => OwedWork.open<Job>(store, { name: 'jobs', owner, coordination, logger, resume: (item) => void resumed[owner]!.push(`${item.id}@${item.owner}`) })
  const a = await open('a')
  const b = await open('b')
  const c = await open('c')
  await store.commit([a.owe({ id: 'job_1', n: 1 }), a.owe({ id: 'job_2', n: 2 })])
  expect(await b.sweep()).toBe(0)
  expect(await c.sweep()).toBe(0)

  // a dies: its presence lease is gone (lapsed; released here rather than waited for).
  await coordination.releaseLease('owed:jobs:a', 'a')
  const taken = [await b.sweep(), await c.sweep()]
  expect(taken.sort()).toEqual([0, 2])
  const [taker] = Object.entries(resumed).find(([, ids]) => ids.length > 0)!
  expect(resumed[taker]!.sort()).toEqual([`job_1@${taker}`, `job_2@${taker}`])
  expect((await a.items.find({})).map((i) => i.owner)).toEqual([taker, taker])
  // Nothing is taken twice, and the dead owner is forgotten.
  expect(await b.sweep()).toBe(0)
  expect(await c.sweep()).toBe(0)
  await a.done('job_1')
  expect((await a.items.find({})).map((i) => i.id)).toEqual(['job_2'])
  await b.stop()
  await c.stop()
})
