import { describe, expect, test } from 'bun:test'
import { checkDeadlines, planTimers } from '../../actors/deadlines'

const d = (name: string, at: number) => ({ name, at })

describe('planTimers', () => {
  test('new and earlier deadlines are scheduled before the write; later ones and removals after', () => {
    const plan = planTimers([d('a', 100), d('b', 100), d('c', 100), d('gone', 5)], [d('a', 100), d('b', 50), d('c', 200), d('new', 10)])
    expect(plan.before).toEqual([d('b', 50), d('new', 10)])
    expect(plan.after).toEqual([d('c', 200)])
    expect(plan.cancel).toEqual(['gone'])
    expect(plan.ignoredDue).toEqual([])
  })

  test('the delivered timer is re-armed when its deadline is still ahead, never cancelled', () => {
    // Early wake-up (the machine ignored it): still pending at 100, woke at 60.
    expect(planTimers([d('a', 100)], [d('a', 100)], { name: 'a', at: 60 }).before).toEqual([d('a', 100)])
    // Fired and removed: the pump's ack deletes it, so nothing to cancel.
    expect(planTimers([d('a', 100)], [], { name: 'a', at: 100 }).cancel).toEqual([])
    // Still there but due: re-arming would spin; reported instead.
    const spin = planTimers([d('a', 100)], [d('a', 100)], { name: 'a', at: 150 })
    expect(spin.before).toEqual([])
    expect(spin.ignoredDue).toEqual([d('a', 100)])
  })

  test('checkDeadlines refuses duplicate names and non-finite instants', () => {
    expect(() => checkDeadlines('k', [d('a', 1), d('a', 2)])).toThrow('appears twice')
    expect(() => checkDeadlines('k', [d('a', Number.NaN)])).toThrow('invalid deadline')
    expect(checkDeadlines('k', [d('a', 1)])).toEqual([d('a', 1)])
  })
})
