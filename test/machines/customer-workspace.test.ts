import { describe, expect, test } from 'bun:test'
import {
  CUSTOMER_WORKSPACE_EFFECTS,
  ERASE_AFTER_MS,
  canApply,
  customerWorkspaceMachine,
  type CustomerWorkspaceEvent,
} from '../../machines/customer-workspace'
import { expectInert, reach, refusals, restore, roundTrips, starts, transitions, type Harness, type RefusedRow, type Row } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const DAY = 24 * 60 * 60 * 1000
const ERASE_AT = T0 + ERASE_AFTER_MS

const del = (at = T0, heldNumbers: string[] = []): CustomerWorkspaceEvent => ({ type: 'customer.delete', at, heldNumbers })
const restoreEv = (at = T0 + DAY): CustomerWorkspaceEvent => ({ type: 'customer.restore', at })
const due = (at: number): CustomerWorkspaceEvent => ({ type: 'timer.due', at })

const h: Harness<CustomerWorkspaceEvent> = {
  machine: customerWorkspaceMachine,
  effects: CUSTOMER_WORKSPACE_EFFECTS,
  input: { id: 'org_1' },
  canApply,
  paths: {
    active: [],
    deleted: [del()],
    erased: [del(), due(ERASE_AT)],
  },
}

test('the erasure delay is 30 days', () => expect(ERASE_AFTER_MS).toBe(30 * DAY))

describe('customer workspace: created', () => {
  starts(h, [{ name: 'POST customers', input: { id: 'org_1' }, to: 'active', context: { archivedAt: null, eraseAt: null } }])
})

// SPEC.md "Customer workspace", row by row (the "also" column as named effects).
const rows: Row<CustomerWorkspaceEvent>[] = [
  {
    from: 'active',
    event: del(),
    condition: 'holds no phone or messaging number',
    to: 'deleted',
    also: ['revokeKeys', 'switchOffWebhooks', 'cancelCampaigns', 'stopSequences', 'stopCallbacks', 'scheduleErasure'],
    context: { archivedAt: T0, eraseAt: ERASE_AT },
  },
  { from: 'deleted', event: due(ERASE_AT), condition: '30 days pass', to: 'erased', also: ['eraseData'], context: { erasedAt: ERASE_AT } },
  { from: 'deleted', event: due(ERASE_AT + 5_000), condition: 'timer delivered late', to: 'erased', also: ['eraseData'], context: { erasedAt: ERASE_AT + 5_000 } },
  { from: 'deleted', event: restoreEv(), condition: 'POST restore', to: 'active', also: ['cancelErasure'], context: { archivedAt: null, eraseAt: null } },
  {
    from: 'active',
    event: del(T0 + 2 * DAY),
    condition: 'deleted again after a restore: a new 30 days',
    to: 'deleted',
    via: [del(), restoreEv()],
    also: ['revokeKeys', 'switchOffWebhooks', 'cancelCampaigns', 'stopSequences', 'stopCallbacks', 'scheduleErasure'],
    context: { archivedAt: T0 + 2 * DAY, eraseAt: T0 + 2 * DAY + ERASE_AFTER_MS },
  },
]

const refused: RefusedRow<CustomerWorkspaceEvent>[] = [
  { from: 'active', event: del(T0, ['+14155550100']), condition: 'holds a phone number', says: '+14155550100', guarded: true },
  { from: 'active', event: del(T0, ['+14155550100', '+919800000000']), condition: 'holds a phone and a messaging number', says: '+14155550100, +919800000000', guarded: true },
  { from: 'active', event: restoreEv(), condition: 'not deleted', says: 'only a deleted customer' },
  { from: 'deleted', event: del(T0 + DAY), condition: 'already deleted', says: 'already' },
  { from: 'erased', event: restoreEv(ERASE_AT + DAY), condition: 'too late', says: 'no longer' },
  { from: 'erased', event: del(ERASE_AT + DAY), condition: 'already erased', says: 'already' },
]

describe('customer workspace: transitions', () => transitions(h, rows))
describe('customer workspace: refused moves', () => refusals(h, refused))

describe('customer workspace: erasure timer is idempotent', () => {
  test('an early wake-up does nothing', () => expectInert(reach(h, 'deleted'), due(ERASE_AT - 1)))
  test('a wake-up while active does nothing', () => expectInert(reach(h, 'active'), due(ERASE_AT)))
  test('the first deadline, redelivered after restore and a second delete, does nothing', () => {
    expectInert(reach(h, 'deleted', { via: [del(), restoreEv(), del(T0 + 2 * DAY)] }), due(ERASE_AT))
  })
  test('a duplicate wake-up after erasure erases nothing again', () => expectInert(reach(h, 'erased'), due(ERASE_AT)))
  test('the deadline survives a restart', () => {
    const restored = restore(h, reach(h, 'deleted').actor)
    restored.send(due(ERASE_AT))
    expect(restored.getSnapshot().value).toBe('erased')
  })
})

describe('customer workspace: snapshots', () => roundTrips(h))

describe('customer workspace: canApply', () => {
  test('a snapshot answer sees the held numbers', () => {
    const s = reach(h, 'active').actor.getSnapshot()
    expect(canApply(s, del(T0, []))).toEqual({ ok: true })
    expect(canApply(s, del(T0, ['+14155550100']))).toMatchObject({ ok: false, state: 'active' })
  })
})
