/**
 * Body read deadlines on short timings: a declared body gets the grace plus its length at the
 * minimum rate; a body of unknown length earns time as its bytes arrive; slow bodies are counted
 * per client, and past the cap the next one turning slow is cut at once.
 */
import { expect, test } from 'bun:test'
import { BodyDeadlines, type BodyProgress, BodyTimeout } from '../../src/http/body-deadline'

const never = () => new Promise<string>(() => {})

test('a declared body that does not arrive in grace + length/rate is cut', async () => {
  const d = new BodyDeadlines({ graceMs: 100, minBytesPerS: 10_000, slowMs: 1_000 })
  const t0 = Date.now()
  const err = await d.read('a', 1_000, never).catch((e) => e)
  expect(err).toBeInstanceOf(BodyTimeout)
  // 100 ms grace + 1,000 bytes at 10,000 B/s = 200 ms.
  expect(Date.now() - t0).toBeGreaterThanOrEqual(190)
  expect(Date.now() - t0).toBeLessThan(400)
})

test('a body that arrives in time is answered, and cancels nothing', async () => {
  const d = new BodyDeadlines({ graceMs: 100 })
  expect(await d.read('a', 10, async () => 'hello')).toBe('hello')
})

test('a chunked body earns time with its bytes; one that stops is cut and its reader cancelled', async () => {
  const d = new BodyDeadlines({ graceMs: 100, minBytesPerS: 10_000, slowMs: 10_000 })
  let cancelled = false
  const t0 = Date.now()
  const err = await d
    .read('a', null, async (p: BodyProgress) => {
      p.onCancel(() => (cancelled = true))
      // 2,000 bytes in the first 50 ms buy 200 ms more; then nothing.
      await Bun.sleep(50)
      p.received(2_000)
      return never()
    })
    .catch((e) => e)
  expect(err).toBeInstanceOf(BodyTimeout)
  expect(Date.now() - t0).toBeGreaterThanOrEqual(290)
  expect(cancelled).toBe(true)
})

test('slow bodies are counted per client; past the cap the next is cut when it turns slow', async () => {
  const cuts: [string, number][] = []
  const d = new BodyDeadlines({ graceMs: 1_000, slowMs: 50, maxSlowPerClient: 2, onTimeout: (client, slow) => void cuts.push([client, slow]) })
  const reads = [1, 2, 3].map(() => d.read('10.0.0.1', 100, never).catch((e) => e))
  const other = d.read('10.0.0.2', 100, never).catch((e) => e)
  const third = await Promise.race([reads[2], Bun.sleep(300).then(() => 'still open')])
  expect(third).toBeInstanceOf(BodyTimeout)
  expect((third as BodyTimeout).message).toMatch(/2 other slow request bodies/)
  expect(cuts).toEqual([['10.0.0.1', 3]])
  await Bun.sleep(20)
  expect(d.slowBodies('10.0.0.1')).toBe(2)
  expect(d.slowBodies('10.0.0.2')).toBe(1)
  // At the deadline every one of them is cut, and the counts go back to nothing.
  await Promise.all([...reads, other])
  expect(d.slowBodies('10.0.0.1') + d.slowBodies('10.0.0.2')).toBe(0)
})
