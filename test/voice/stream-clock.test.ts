/**
 * The caller's audio as a call's clock (src/voice/stream-clock.ts): time is where the line's audio
 * is, and a wait falls due only once the VAD has judged the audio up to it — a host that falls
 * behind delays the wait with the audio instead of firing it while the caller's words still wait.
 */
import { expect, test } from 'bun:test'
import { StreamClock } from '../../src/voice/stream-clock'

test('now is the newest frame’s place in the stream (its stamp, or counted on when unstamped)', () => {
  const c = new StreamClock()
  c.heard(20, 20)
  c.heard(20, 40)
  expect(c.now()).toBe(40)
  c.heard(20, 30) // an old stamp never moves time back
  expect(c.now()).toBe(40)
  c.heard(20)
  expect(c.now()).toBe(60)
})

test('a wait falls due when the judged audio reaches it, not when the audio arrives', () => {
  const c = new StreamClock()
  const fired: string[] = []
  c.heard(20, 100)
  c.after(500, () => fired.push('end of turn'))
  // The caller's next 600 ms arrived in one burst after a stall, the VAD not through it yet.
  for (let at = 120; at <= 700; at += 20) c.heard(20, at)
  expect(fired).toEqual([])
  c.judged(580)
  expect(fired).toEqual([])
  c.judged(600)
  expect(fired).toEqual(['end of turn'])
})

test('due waits run earliest first; a cleared one never; one set while they run runs when due', () => {
  const c = new StreamClock()
  const fired: string[] = []
  c.after(200, () => fired.push('b'))
  c.after(100, () => {
    fired.push('a')
    c.after(0, () => fired.push('a+0'))
  })
  const cancel = c.after(150, () => fired.push('cleared'))
  cancel()
  c.heard(300, 300)
  c.judged(300)
  expect(fired).toEqual(['a', 'b', 'a+0'])
})

test('inside a wait, the place it fell due; the newest frame may be past it', () => {
  const c = new StreamClock()
  const seen: number[] = []
  c.heard(20, 100)
  c.after(500, () => seen.push(c.dueNow(), c.now()))
  // A burst ran the line 160 ms past the wait before the VAD reached it.
  for (let at = 120; at <= 760; at += 20) c.heard(20, at)
  c.judged(620)
  expect(seen).toEqual([600, 760])
  expect(c.dueNow()).toBe(760)
})
