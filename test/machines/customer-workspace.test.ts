import { describe, expect, test } from 'bun:test'
import { fromPromise } from 'xstate'
import {
  CUSTOMER_WORKSPACE_EFFECTS,
  type CustomerWorkspaceEvent,
  type CustomerWorkspaceSnapshot,
  canApply,
  customerWorkspaceDeadlines,
  customerWorkspaceMachine,
  EFFECT_RETRY_FIRST_MS,
  EFFECT_RETRY_MAX_MS,
  ERASE_AFTER_MS,
  retryDelay,
} from '../../machines/customer-workspace'
import { expectInert, type Fakes, type Harness, type RefusedRow, type Row, reachSettled, refusals, restore, roundTrips, settle, starts, transitions } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const DAY = 24 * 60 * 60 * 1000
const ERASE_AT = T0 + ERASE_AFTER_MS

const del = (at = T0, heldNumbers: string[] = []): CustomerWorkspaceEvent => ({ type: 'customer.delete', at, heldNumbers })
const restoreEv = (at = T0 + DAY): CustomerWorkspaceEvent => ({ type: 'customer.restore', at })
const due = (at: number, name = 'erase'): CustomerWorkspaceEvent => ({ type: 'timer.due', at, name })

const h: Harness<CustomerWorkspaceEvent> = {
  machine: customerWorkspaceMachine,
  effects: CUSTOMER_WORKSPACE_EFFECTS,
  invokes: CUSTOMER_WORKSPACE_EFFECTS,
  input: { id: 'org_1', developerId: 'ws_1' },
  canApply,
  paths: {
    active: [],
    deleted: [del()],
    erased: [del(), due(ERASE_AT)],
  },
}

/** Effect fakes that record `name(input)` and then resolve, fail (with an instant) or hang. */
function fakes(outcome: Partial<Record<string, 'fail' | 'hang'>>, calls: unknown[] = []): Fakes {
  return (log) =>
    Object.fromEntries(
      CUSTOMER_WORKSPACE_EFFECTS.map((name) => [
        name,
        fromPromise(async ({ input }: { input: unknown }) => {
          log.push(name)
          calls.push({ name, input })
          if (outcome[name] === 'fail') throw Object.assign(new Error('store unavailable'), { at: T0 + 1_000 })
          if (outcome[name] === 'hang') await new Promise(() => {})
        }),
      ]),
    )
}

test('the erasure delay is 30 days', () => expect(ERASE_AFTER_MS).toBe(30 * DAY))

describe('customer workspace: created', () => {
  starts(h, [{ name: 'POST customers', input: { id: 'org_1' }, to: 'active', context: { archivedAt: null, eraseAt: null, developerId: null } }])
})

// docs/spec.md "Customer workspace", row by row; the "also" column is the invoked effect of the state
// passed through (what each effect does is tested against the real store in the e2e test).
const rows: Row<CustomerWorkspaceEvent>[] = [
  {
    from: 'active',
    event: del(),
    condition: 'holds no phone or messaging number',
    to: 'deleted',
    through: ['archiving'],
    also: ['archiveCustomer'],
    context: { archivedAt: T0, eraseAt: ERASE_AT, lastError: null },
  },
  { from: 'deleted', event: due(ERASE_AT), condition: '30 days pass', to: 'erased', through: ['erasing'], also: ['eraseCustomer'], context: { erasedAt: ERASE_AT } },
  {
    from: 'deleted',
    event: due(ERASE_AT + 5_000),
    condition: 'timer delivered late',
    to: 'erased',
    through: ['erasing'],
    also: ['eraseCustomer'],
    context: { erasedAt: ERASE_AT + 5_000 },
  },
  {
    from: 'deleted',
    event: restoreEv(),
    condition: 'POST restore',
    to: 'active',
    through: ['restoring'],
    also: ['restoreCustomer'],
    context: { archivedAt: null, eraseAt: null, restoredAt: T0 + DAY },
  },
  {
    from: 'active',
    event: del(T0 + 2 * DAY),
    condition: 'deleted again after a restore: a new 30 days',
    to: 'deleted',
    via: [del(), restoreEv()],
    through: ['archiving'],
    also: ['archiveCustomer'],
    context: { archivedAt: T0 + 2 * DAY, eraseAt: T0 + 2 * DAY + ERASE_AFTER_MS, restoredAt: null },
  },
]

const refused: RefusedRow<CustomerWorkspaceEvent>[] = [
  { from: 'active', event: del(T0, ['+14155550100']), condition: 'holds a phone number', says: '+14155550100', guarded: true },
  { from: 'active', event: del(T0, ['+14155550100', '+919800000000']), condition: 'holds a phone and a messaging number', says: '+14155550100, +919800000000', guarded: true },
  { from: 'active', event: restoreEv(), condition: 'not deleted', says: 'only a deleted customer' },
  { from: 'deleted', event: del(T0 + DAY), condition: 'already deleted', says: 'already' },
  { from: 'erased', event: restoreEv(ERASE_AT + DAY), condition: 'too late', says: 'no longer' },
  { from: 'erased', event: del(ERASE_AT + DAY), condition: 'already erased', says: 'already' },
  // While an effect is being applied nothing else may interleave with it.
  { from: 'archiving', event: restoreEv(), condition: 'delete still being applied', says: 'once the delete is applied', via: [del()], fakes: fakes({ archiveCustomer: 'hang' }) },
  { from: 'archiving', event: del(T0 + 1), condition: 'delete still being applied', says: 'already', via: [del()], fakes: fakes({ archiveCustomer: 'hang' }) },
  { from: 'restoring', event: del(T0 + 2 * DAY), condition: 'restore still being applied', says: 'once the restore', via: [del(), restoreEv()], fakes: fakes({ restoreCustomer: 'hang' }) },
  { from: 'restoring', event: restoreEv(T0 + 2 * DAY), condition: 'restore still being applied', says: 'already', via: [del(), restoreEv()], fakes: fakes({ restoreCustomer: 'hang' }) },
  { from: 'erasing', event: restoreEv(ERASE_AT), condition: 'erasure under way', says: 'no longer', via: [del(), due(ERASE_AT)], fakes: fakes({ eraseCustomer: 'hang' }) },
  { from: 'erasing', event: del(ERASE_AT), condition: 'erasure under way', says: 'already', via: [del(), due(ERASE_AT)], fakes: fakes({ eraseCustomer: 'hang' }) },
]

describe('customer workspace: transitions', () => transitions(h, rows))
describe('customer workspace: refused moves', () => refusals(h, refused))

describe('customer workspace: effects get what they need', () => {
  test('archive, restore and erase are called with the customer, its developer and their instants', async () => {
    const calls: unknown[] = []
    const { actor } = await reachSettled(h, 'active', { fakes: fakes({}, calls) })
    for (const e of [del(), restoreEv(), del(T0 + 2 * DAY), due(T0 + 2 * DAY + ERASE_AFTER_MS)]) {
      actor.send(e)
      await settle(actor)
    }
    expect(actor.getSnapshot().value).toBe('erased')
    expect(calls).toEqual([
      { name: 'archiveCustomer', input: { id: 'org_1', developerId: 'ws_1', archivedAt: T0, eraseAt: ERASE_AT } },
      { name: 'restoreCustomer', input: { id: 'org_1', developerId: 'ws_1', restoredAt: T0 + DAY } },
      { name: 'archiveCustomer', input: { id: 'org_1', developerId: 'ws_1', archivedAt: T0 + 2 * DAY, eraseAt: T0 + 2 * DAY + ERASE_AFTER_MS } },
      { name: 'eraseCustomer', input: { id: 'org_1', developerId: 'ws_1', erasedAt: T0 + 2 * DAY + ERASE_AFTER_MS } },
    ])
  })
})

describe('customer workspace: a failed effect is recorded and retried on its durable deadline', () => {
  test('retry delays double from 30 s up to 15 min', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(retryDelay)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000])
    expect(retryDelay(1)).toBe(EFFECT_RETRY_FIRST_MS)
    expect(retryDelay(99)).toBe(EFFECT_RETRY_MAX_MS)
  })

  test('archive fails: stays archiving with lastError and a retry deadline; the retry runs it again', async () => {
    let failing = true
    const calls: string[] = []
    const flaky: Fakes = (log) => ({
      archiveCustomer: fromPromise(async () => {
        log.push('archiveCustomer')
        calls.push('archiveCustomer')
        if (failing) throw Object.assign(new Error('store unavailable'), { at: T0 + 1_000 })
      }),
    })
    const { actor, log } = await reachSettled(h, 'active', { fakes: flaky })
    actor.send(del())
    await settle(actor)
    let snap = actor.getSnapshot() as CustomerWorkspaceSnapshot
    expect(snap.value).toBe('archiving')
    expect(snap.context.lastError).toEqual({ effect: 'archiveCustomer', message: 'store unavailable', at: T0 + 1_000, attempts: 1 })
    expect(snap.context.retryAt).toBe(T0 + 1_000 + 30_000)
    expect(customerWorkspaceDeadlines(snap)).toEqual([{ name: 'retry', at: T0 + 31_000 }])
    expect(canApply(snap, restoreEv())).toMatchObject({ ok: false, state: 'archiving' })

    // Early wake-up: nothing. A second failure doubles the wait.
    log.length = 0
    expectInert({ actor, log }, due(T0 + 30_999, 'retry'))
    actor.send(due(T0 + 31_000, 'retry'))
    await settle(actor)
    snap = actor.getSnapshot() as CustomerWorkspaceSnapshot
    expect(snap.context.lastError?.attempts).toBe(2)
    expect(snap.context.retryAt).toBe(T0 + 1_000 + 60_000)

    failing = false
    actor.send(due(T0 + 61_000, 'retry'))
    await settle(actor)
    snap = actor.getSnapshot() as CustomerWorkspaceSnapshot
    expect(snap.value).toBe('deleted')
    expect(snap.context).toMatchObject({ lastError: null, retryAt: null, archivedAt: T0, eraseAt: ERASE_AT })
    expect(calls).toEqual(['archiveCustomer', 'archiveCustomer', 'archiveCustomer'])
    expect(customerWorkspaceDeadlines(snap)).toEqual([{ name: 'erase', at: ERASE_AT }])
  })

  test('erase fails: stays erasing (restore still refused) until a retry succeeds', async () => {
    const calls: unknown[] = []
    const { actor } = await reachSettled(h, 'deleted', { fakes: fakes({ eraseCustomer: 'fail' }, calls) })
    actor.send(due(ERASE_AT))
    await settle(actor)
    const snap = actor.getSnapshot() as CustomerWorkspaceSnapshot
    expect(snap.value).toBe('erasing')
    expect(snap.context.lastError).toMatchObject({ effect: 'eraseCustomer', attempts: 1 })
    expect(customerWorkspaceDeadlines(snap)).toEqual([{ name: 'retry', at: T0 + 1_000 + 30_000 }])
    expect(canApply(snap, restoreEv(ERASE_AT))).toMatchObject({ ok: false, state: 'erasing' })
  })

  test('a failure without an instant retries from the instant the effect started', async () => {
    const { actor } = await reachSettled(h, 'active', {
      fakes: () => ({ archiveCustomer: fromPromise(async () => Promise.reject('boom')) }),
    })
    actor.send(del())
    await settle(actor)
    const snap = actor.getSnapshot() as CustomerWorkspaceSnapshot
    expect(snap.context.lastError).toEqual({ effect: 'archiveCustomer', message: 'boom', at: T0, attempts: 1 })
    expect(snap.context.retryAt).toBe(T0 + 30_000)
  })
})

describe('customer workspace: erasure timer is idempotent', () => {
  test('an early wake-up does nothing', async () => expectInert(await reachSettled(h, 'deleted'), due(ERASE_AT - 1)))
  test('a wake-up while active does nothing', async () => expectInert(await reachSettled(h, 'active'), due(ERASE_AT)))
  test('the first deadline, redelivered after restore and a second delete, does nothing', async () => {
    expectInert(await reachSettled(h, 'deleted', { via: [del(), restoreEv(), del(T0 + 2 * DAY)] }), due(ERASE_AT))
  })
  test('a duplicate wake-up after erasure erases nothing again', async () => expectInert(await reachSettled(h, 'erased'), due(ERASE_AT)))
  test('a retry wake-up with nothing to retry does nothing', async () => expectInert(await reachSettled(h, 'deleted'), due(ERASE_AT - 1, 'retry')))
  test('the deadline survives a restart', async () => {
    const log: string[] = []
    const restored = restore(h, (await reachSettled(h, 'deleted')).actor, log)
    restored.send(due(ERASE_AT))
    await settle(restored)
    expect(restored.getSnapshot().value).toBe('erased')
    expect(log).toEqual(['eraseCustomer'])
  })
  test('an effect in flight at the crash runs again when the snapshot is resumed', async () => {
    const { actor } = await reachSettled(h, 'archiving', { via: [del()], fakes: fakes({ archiveCustomer: 'hang' }) })
    const log: string[] = []
    const resumed = restore(h, actor, log)
    await settle(resumed)
    expect(log).toEqual(['archiveCustomer'])
    expect(resumed.getSnapshot().value).toBe('deleted')
  })
})

describe('customer workspace: deadlines', () => {
  test('only a deleted customer waits for its erasure', async () => {
    for (const state of ['active', 'erased']) {
      expect(customerWorkspaceDeadlines((await reachSettled(h, state)).actor.getSnapshot())).toEqual([])
    }
    expect(customerWorkspaceDeadlines((await reachSettled(h, 'deleted')).actor.getSnapshot())).toEqual([{ name: 'erase', at: ERASE_AT }])
  })
})

describe('customer workspace: snapshots', () => roundTrips(h))

describe('customer workspace: canApply', () => {
  test('a snapshot answer sees the held numbers', async () => {
    const s = (await reachSettled(h, 'active')).actor.getSnapshot()
    expect(canApply(s, del(T0, []))).toEqual({ ok: true })
    expect(canApply(s, del(T0, ['+14155550100']))).toMatchObject({ ok: false, state: 'active' })
  })
})
