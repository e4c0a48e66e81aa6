import { expect, test } from 'bun:test'
import { LaneFullError, Lanes, LanesStoppedError } from '../../../src/features/webhooks/lanes'

const gate = () => {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

test('at most `concurrency` jobs run per key; the rest wait in order', async () => {
  const lanes = new Lanes({ concurrency: 2, maxQueued: 10 })
  const g = gate()
  const started: number[] = []
  const done = [1, 2, 3, 4].map((n) =>
    lanes.run('a', async () => {
      started.push(n)
      await g.promise
      return n
    }),
  )
  await Bun.sleep(5)
  expect(started).toEqual([1, 2])
  expect(lanes.load('a')).toBe(4)
  g.open()
  expect(await Promise.all(done)).toEqual([1, 2, 3, 4])
  expect(started).toEqual([1, 2, 3, 4])
  expect(lanes.load('a')).toBe(0)
})

test('a stuck key never holds up another key', async () => {
  const lanes = new Lanes({ concurrency: 1, maxQueued: 10 })
  void lanes.run('slow', () => new Promise(() => {}))
  void lanes.run('slow', async () => 'never')
  expect(await lanes.run('fast', async () => 'ran')).toBe('ran')
})

test('a full queue refuses at once with LaneFullError', async () => {
  const lanes = new Lanes({ concurrency: 1, maxQueued: 1 })
  void lanes.run('a', () => new Promise(() => {}))
  void lanes.run('a', async () => 1)
  await expect(lanes.run('a', async () => 2)).rejects.toBeInstanceOf(LaneFullError)
})

test('a failing job frees its slot', async () => {
  const lanes = new Lanes({ concurrency: 1, maxQueued: 5 })
  await expect(lanes.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
  expect(await lanes.run('a', async () => 'next')).toBe('next')
})

test('stop drops what waits, lets running jobs finish within the grace, and refuses new work', async () => {
  const lanes = new Lanes({ concurrency: 1, maxQueued: 5 })
  const g = gate()
  const running = lanes.run('a', async () => {
    await g.promise
    return 'finished'
  })
  const waiting = lanes.run('a', async () => 'never')
  await Bun.sleep(1)
  const stopping = lanes.stop(1_000)
  await expect(waiting).rejects.toBeInstanceOf(LanesStoppedError)
  g.open()
  await stopping
  expect(await running).toBe('finished')
  await expect(lanes.run('b', async () => 1)).rejects.toBeInstanceOf(LanesStoppedError)
  expect(lanes.isStopped).toBe(true)
})
