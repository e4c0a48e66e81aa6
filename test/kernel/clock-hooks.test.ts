import { expect, test } from 'bun:test'
import { ClockHooks } from '../../src/kernel/clock-hooks'

test('hooks run in the order registered, each after the one before has finished', async () => {
  const hooks = new ClockHooks()
  const ran: string[] = []
  hooks.on('timers', async (now) => {
    await Bun.sleep(5)
    ran.push(`timers ${now}`)
  })
  hooks.on('sandbox', async (now) => void ran.push(`sandbox ${now}`))
  await hooks.advanced(42)
  expect(ran).toEqual(['timers 42', 'sandbox 42'])
  expect(hooks.names).toEqual(['timers', 'sandbox'])
})

test('a name is registered once; a hook that fails is named, and the ones after it do not run', async () => {
  const hooks = new ClockHooks()
  const ran: string[] = []
  hooks.on('media ends', async () => {
    throw new Error('store closed')
  })
  hooks.on('after', async () => void ran.push('after'))
  expect(() => hooks.on('after', async () => {})).toThrow('a clock hook named after is registered already')
  await expect(hooks.advanced(1)).rejects.toThrow('the clock hook media ends failed: store closed')
  expect(ran).toEqual([])
})
