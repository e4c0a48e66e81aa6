import { describe, expect, test } from 'bun:test'
import { type EndedBy, StreamEnd } from '../../../../src/features/calls/live/stream-end'

const tracked = () => {
  const works: Promise<void>[] = []
  return { works, end: new StreamEnd((work) => void works.push(work)) }
}

describe('a live stream ends once', () => {
  test('the first ask runs the wrap-up with its hangup and error; later asks do not run it again', async () => {
    const { works, end } = tracked()
    const ran: [EndedBy, string | undefined][] = []
    await end.wrapUpWith(async (hangup, error) => void ran.push([hangup, error]))
    expect(end.asked).toBe(false)
    await end.end('failed', 'media stream lost')
    await end.end('answered')
    expect(ran).toEqual([['failed', 'media stream lost']])
    expect(works).toHaveLength(1)
    expect(end.asked).toBe(true)
  })

  test('an end asked before the wrap-up is named is kept, and runs when it is', async () => {
    const { works, end } = tracked()
    const ran: EndedBy[] = []
    await end.end('answered')
    expect(works).toHaveLength(0)
    await end.wrapUpWith(async (hangup) => void ran.push(hangup))
    expect(ran).toEqual(['answered'])
    expect(works).toHaveLength(1)
  })

  test('a repeat while the wrap-up runs does not wait for it (the wrap-up may be what asked)', async () => {
    const { end } = tracked()
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await end.wrapUpWith(() => held)
    const first = end.end('answered')
    let repeated = false
    await end.end('failed').then(() => (repeated = true))
    expect(repeated).toBe(true)
    release()
    await first
  })
})
