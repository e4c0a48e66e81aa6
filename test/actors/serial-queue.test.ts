import { describe, expect, test } from 'bun:test'
import { SerialQueue } from '../../actors/serial-queue'
import { gate, sleep } from './support'

describe('SerialQueue', () => {
  test('jobs on one key run one at a time, in the order queued', async () => {
    const q = new SerialQueue()
    const seen: string[] = []
    let running = 0
    const jobs = Array.from({ length: 50 }, (_, i) =>
      q.run('a', async () => {
        running++
        expect(running).toBe(1)
        seen.push(`start ${i}`)
        await sleep(i % 3) // uneven durations must not reorder anything
        seen.push(`end ${i}`)
        running--
        return i
      }),
    )
    expect(await Promise.all(jobs)).toEqual(Array.from({ length: 50 }, (_, i) => i))
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => [`start ${i}`, `end ${i}`]).flat())
  })

  test('different keys run concurrently', async () => {
    const q = new SerialQueue()
    const held = gate()
    const blocked = q.run('a', () => held.promise)
    // b finishes while a is still held.
    expect(await q.run('b', async () => 'b done')).toBe('b done')
    held.open(1)
    expect(await blocked).toBe(1)
  })

  test('a failing job rejects its caller only; the next job still runs', async () => {
    const q = new SerialQueue()
    const failed = q.run('a', async () => {
      throw new Error('boom')
    })
    const next = q.run('a', async () => 'ok')
    await expect(failed).rejects.toThrow('boom')
    expect(await next).toBe('ok')
  })

  test('an idle key keeps no entry (no memory per idle key)', async () => {
    const q = new SerialQueue()
    await Promise.all(Array.from({ length: 100 }, (_, i) => q.run(`k${i}`, async () => i)))
    await sleep(0)
    expect(q.activeKeys).toBe(0)
    expect(q.depth('k1')).toBe(0)
  })
})
