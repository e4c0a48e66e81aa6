/** The clock port's scheduling: the manual clock runs what falls due as it is stepped, at its instant. */
import { expect, test } from 'bun:test'
import { ManualClock } from '../src/clock'

test('work set with after runs inside advance, in due order, with now() at its instant; a cancelled one never', () => {
  const clock = new ManualClock(1_000)
  const ran: [string, number][] = []
  clock.after(300, () => ran.push(['b', clock.now()]))
  clock.after(100, () => ran.push(['a', clock.now()]))
  const cancel = clock.after(200, () => ran.push(['cancelled', clock.now()]))
  cancel()
  expect(clock.advance(99)).toBe(1_099)
  expect(ran).toEqual([])
  expect(clock.advance(500)).toBe(1_599)
  expect(ran).toEqual([
    ['a', 1_100],
    ['b', 1_300],
  ])
})

test('every repeats on each step of its period, work set by work runs in the same advance, and stopping ends it', () => {
  const clock = new ManualClock(0)
  const beats: number[] = []
  const stop = clock.every(1_000, () => {
    beats.push(clock.now())
    if (clock.now() === 2_000) clock.after(0, () => beats.push(-clock.now()))
  })
  clock.advance(3_500)
  expect(beats).toEqual([1_000, 2_000, -2_000, 3_000])
  stop()
  clock.advance(10_000)
  expect(beats).toHaveLength(4)
  expect(() => clock.every(0, () => {})).toThrow(RangeError)
})
