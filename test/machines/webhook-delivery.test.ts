import { describe, expect, test } from 'bun:test'
import {
  WEBHOOK_DELIVERY_EFFECTS,
  canApply,
  retryDelayMs,
  webhookDeliveryMachine,
  type WebhookDeliveryEvent,
} from '../../machines/webhook-delivery'
import { expectInert, reach, refusals, restore, roundTrips, starts, transitions, type Harness, type RefusedRow, type Row } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const SEC = 1000
const MIN = 60 * SEC

const ok = (at: number): WebhookDeliveryEvent => ({ type: 'delivery.succeeded', at, status: 204 })
const fail = (at: number, status: number | null = 503): WebhookDeliveryEvent => ({ type: 'delivery.failed', at, status, error: status ? `HTTP ${status}` : 'timed out after 5000 ms' })
const due = (at: number): WebhookDeliveryEvent => ({ type: 'timer.due', at })
const retry = (at: number): WebhookDeliveryEvent => ({ type: 'delivery.retry', at })

/** `n` failed attempts, each retried exactly when due; returns the events and when the last failed. */
function failures(n: number): { events: WebhookDeliveryEvent[]; lastAt: number } {
  const events: WebhookDeliveryEvent[] = []
  let at = T0 + SEC
  for (let i = 1; i <= n; i++) {
    events.push(fail(at))
    if (i < n) {
      at += retryDelayMs(i)
      events.push(due(at))
    }
  }
  return { events, lastAt: at }
}

const h: Harness<WebhookDeliveryEvent> = {
  machine: webhookDeliveryMachine,
  effects: WEBHOOK_DELIVERY_EFFECTS,
  input: { id: 'dlv_1', maxRetries: 3 },
  canApply,
  paths: {
    pending: [],
    retrying: failures(1).events,
    success: [ok(T0 + SEC)],
    failed: failures(4).events,
  },
}

test('backoff: 30 s · 4^(n−1), capped at 1 h', () => {
  expect([1, 2, 3, 4, 5, 6].map(retryDelayMs)).toEqual([30 * SEC, 2 * MIN, 8 * MIN, 32 * MIN, 60 * MIN, 60 * MIN])
})

describe('webhook delivery: created', () => {
  starts(h, [{ name: 'event queued', input: { id: 'dlv_1', maxRetries: 3 }, to: 'pending', also: ['deliver'], context: { attempts: 0 } }])
})

const F3 = failures(3)
const F4 = failures(4)
// SPEC.md rows (retry) plus the moves the status meanings imply.
const rows: Row<WebhookDeliveryEvent>[] = [
  { from: 'failed', event: retry(F4.lastAt + MIN), condition: 'POST retry', to: 'pending', also: ['deliver'], context: { attempts: 0, nextAttemptAt: null, completedAt: null } },
  { from: 'pending', event: ok(T0 + SEC), condition: '2xx', to: 'success', context: { attempts: 1, responseStatus: 204, errorMessage: null, completedAt: T0 + SEC } },
  { from: 'pending', event: fail(T0 + SEC), condition: 'attempts remain', to: 'retrying', also: ['scheduleAttempt'], context: { attempts: 1, responseStatus: 503, errorMessage: 'HTTP 503', nextAttemptAt: T0 + SEC + 30 * SEC } },
  { from: 'pending', event: fail(T0 + SEC, null), condition: 'timed out, attempts remain', to: 'retrying', also: ['scheduleAttempt'], context: { responseStatus: null, errorMessage: 'timed out after 5000 ms' } },
  { from: 'retrying', event: due(T0 + SEC + 30 * SEC), condition: 'retry time arrives', to: 'pending', also: ['deliver'], context: { attempts: 1, nextAttemptAt: null } },
  { from: 'pending', event: fail(F3.lastAt + SEC), condition: 'third failure: 8 min wait', to: 'retrying', via: [...F3.events.slice(0, -1)], also: ['scheduleAttempt'], context: { attempts: 3, nextAttemptAt: F3.lastAt + SEC + 8 * MIN } },
  { from: 'pending', event: fail(F4.lastAt), condition: 'last of max_retries + 1 attempts', to: 'failed', via: F4.events.slice(0, -1), context: { attempts: 4, completedAt: F4.lastAt, nextAttemptAt: null } },
  { from: 'pending', event: fail(T0 + SEC), condition: 'max_retries 0: one attempt only', to: 'failed', input: { id: 'dlv_0', maxRetries: 0 }, context: { attempts: 1 } },
  { from: 'pending', event: ok(F4.lastAt + 2 * MIN), condition: 'retried by hand, then 2xx', to: 'success', via: [...F4.events, retry(F4.lastAt + MIN)], context: { attempts: 1, completedAt: F4.lastAt + 2 * MIN } },
]

const refused: RefusedRow<WebhookDeliveryEvent>[] = [
  { from: 'pending', event: retry(T0 + SEC), says: 'only failed deliveries can be retried' },
  { from: 'retrying', event: retry(T0 + 2 * SEC), says: 'only failed deliveries can be retried' },
  { from: 'success', event: retry(T0 + 2 * SEC), says: 'only failed deliveries can be retried' },
]

describe('webhook delivery: transitions', () => transitions(h, rows))
describe('webhook delivery: refused moves', () => refusals(h, refused))

describe('webhook delivery: retry timer is idempotent', () => {
  const firstDue = T0 + SEC + 30 * SEC
  test('an early wake-up does nothing', () => expectInert(reach(h, 'retrying'), due(firstDue - 1)))
  test('a duplicate wake-up after it re-queued does nothing', () => {
    expectInert(reach(h, 'pending', { via: [...failures(1).events, due(firstDue)] }), due(firstDue))
  })
  test('an old wake-up during a later, longer wait does nothing', () => {
    expectInert(reach(h, 'retrying', { via: failures(2).events }), due(firstDue))
  })
  for (const state of ['success', 'failed']) {
    test(`a wake-up in ${state} does nothing`, () => expectInert(reach(h, state), due(T0 + 24 * 60 * MIN)))
  }
  test('a late answer after the attempt failed does nothing', () => expectInert(reach(h, 'retrying'), ok(T0 + 2 * SEC)))
  test('the deadline survives a restart', () => {
    const restored = restore(h, reach(h, 'retrying').actor)
    restored.send(due(firstDue))
    expect(restored.getSnapshot().value).toBe('pending')
  })
})

describe('webhook delivery: snapshots', () => roundTrips(h))
