/** Silero's batching on a stepped clock: windows from several calls wait BATCH_WAIT_MS and run as one batch. */
import { expect, test } from 'bun:test'
import { ManualClock } from '../../src/clock'
import { BATCH_WAIT_MS, INPUT, SileroBatcher, STATE } from '../../src/voice/silero-batch'

test('windows of two calls wait out the batch wait on the clock, then run together, each answered with its own', async () => {
  const clock = new ManualClock(0)
  const runs: number[][] = []
  const batcher = new SileroBatcher(async (counts, input, state, quiet) => {
    runs.push([...counts])
    return { probs: Float32Array.from({ length: input.length / INPUT }, (_, i) => i / 10), state, quiet }
  }, clock)
  const first = batcher.infer(new Float32Array(INPUT), new Float32Array(STATE))
  const second = batcher.infer(new Float32Array(2 * INPUT), new Float32Array(STATE))
  clock.advance(BATCH_WAIT_MS - 1)
  expect(runs).toEqual([])
  clock.advance(1)
  expect(runs).toEqual([[1, 2]])
  expect(await first).toEqual([0])
  expect((await second).map((p) => Math.round(p * 10))).toEqual([1, 2])
})
