import { describe, expect, test } from 'bun:test'
import { createActor, fromPromise, waitFor } from 'xstate'
import {
  canApply,
  type DeliverInput,
  type DeliverOutput,
  deliveryDeadlines,
  retryDelayMs,
  WEBHOOK_DELIVERY_EFFECTS,
  type WebhookDeliveryEvent,
  webhookDeliveryMachine,
} from '../../machines/webhook-delivery'
import {
  effectDone,
  effectError,
  expectPureInert,
  type PureHarness,
  type PureRefusedRow,
  type PureRow,
  pureRefusals,
  pureRoundTrips,
  pureStarts,
  pureTransitions,
  reachPure,
  type Step,
  walk,
} from './webhook-table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const SEC = 1000
const MIN = 60 * SEC

const ok = (at: number): Step => effectDone('deliver', { ok: true, at, status: 204, error: null, retryable: true } satisfies DeliverOutput)
const fail = (at: number, status: number | null = 503): Step =>
  effectDone('deliver', { ok: false, at, status, error: status ? `HTTP ${status}` : 'no complete answer within 5000 ms', retryable: true } satisfies DeliverOutput)
const gone = (at: number): Step => effectDone('deliver', { ok: false, at, status: null, error: 'endpoint was deleted', retryable: false } satisfies DeliverOutput)
const due = (at: number): WebhookDeliveryEvent => ({ type: 'timer.due', at, name: 'retry' })
const retry = (at: number): WebhookDeliveryEvent => ({ type: 'delivery.retry', at })

/** `n` failed attempts, each retried exactly when due; returns the steps and when the last failed. */
function failures(n: number): { events: Step[]; lastAt: number } {
  const events: Step[] = []
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

const h: PureHarness = {
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
  pureStarts(h, [{ name: 'event queued', input: { id: 'dlv_1', maxRetries: 3 }, to: 'pending', also: ['deliver'], context: { attempts: 0 } }])
})

const F3 = failures(3)
const F4 = failures(4)
// docs/spec.md rows (retry) plus the moves the status meanings imply; an attempt's outcome is the
// deliver effect finishing (done:deliver).
const rows: PureRow[] = [
  { from: 'failed', event: retry(F4.lastAt + MIN), condition: 'POST retry', to: 'pending', also: ['deliver'], context: { attempts: 0, nextAttemptAt: null, completedAt: null } },
  { from: 'pending', event: ok(T0 + SEC), condition: '2xx', to: 'success', context: { attempts: 1, responseStatus: 204, errorMessage: null, completedAt: T0 + SEC } },
  { from: 'pending', event: fail(T0 + SEC), condition: 'attempts remain', to: 'retrying', context: { attempts: 1, responseStatus: 503, errorMessage: 'HTTP 503', nextAttemptAt: T0 + SEC + 30 * SEC } },
  { from: 'pending', event: fail(T0 + SEC, null), condition: 'timed out, attempts remain', to: 'retrying', context: { responseStatus: null, errorMessage: 'no complete answer within 5000 ms' } },
  { from: 'retrying', event: due(T0 + SEC + 30 * SEC), condition: 'retry time arrives', to: 'pending', also: ['deliver'], context: { attempts: 1, nextAttemptAt: null } },
  {
    from: 'pending',
    event: fail(F3.lastAt + SEC),
    condition: 'third failure: 8 min wait',
    to: 'retrying',
    via: [...F3.events.slice(0, -1)],
    context: { attempts: 3, nextAttemptAt: F3.lastAt + SEC + 8 * MIN },
  },
  {
    from: 'pending',
    event: fail(F4.lastAt),
    condition: 'last of max_retries + 1 attempts',
    to: 'failed',
    via: F4.events.slice(0, -1),
    context: { attempts: 4, completedAt: F4.lastAt, nextAttemptAt: null },
  },
  { from: 'pending', event: fail(T0 + SEC), condition: 'max_retries 0: one attempt only', to: 'failed', input: { id: 'dlv_0', maxRetries: 0 }, via: [], context: { attempts: 1 } },
  {
    from: 'pending',
    event: ok(F4.lastAt + 2 * MIN),
    condition: 'retried by hand, then 2xx',
    to: 'success',
    via: [...F4.events, retry(F4.lastAt + MIN)],
    context: { attempts: 1, completedAt: F4.lastAt + 2 * MIN },
  },
  {
    from: 'pending',
    event: gone(T0 + SEC),
    condition: 'endpoint deleted or deactivated: waiting cannot help',
    to: 'failed',
    context: { attempts: 1, errorMessage: 'endpoint was deleted', completedAt: T0 + SEC },
  },
  {
    from: 'pending',
    event: effectError('deliver', Object.assign(new Error('bug'), { at: T0 + 2 * SEC })),
    condition: 'the effect crashed',
    to: 'failed',
    context: { attempts: 1, errorMessage: 'delivery could not be attempted: Error: bug', completedAt: T0 + 2 * SEC },
  },
]

const refused: PureRefusedRow[] = [
  { from: 'pending', event: retry(T0 + SEC), says: 'only failed deliveries can be retried' },
  { from: 'retrying', event: retry(T0 + 2 * SEC), says: 'only failed deliveries can be retried' },
  { from: 'success', event: retry(T0 + 2 * SEC), says: 'only failed deliveries can be retried' },
]

describe('webhook delivery: transitions', () => pureTransitions(h, rows))
describe('webhook delivery: refused moves', () => pureRefusals(h, refused))

describe('webhook delivery: the retry deadline', () => {
  const firstDue = T0 + SEC + 30 * SEC
  test('retrying exposes one durable deadline; other states none', () => {
    expect(deliveryDeadlines(reachPure(h, 'retrying') as any)).toEqual([{ name: 'retry', at: firstDue }])
    for (const s of ['pending', 'success', 'failed']) expect(deliveryDeadlines(reachPure(h, s) as any)).toEqual([])
  })
  test('an early wake-up does nothing', () => expectPureInert(h, reachPure(h, 'retrying'), due(firstDue - 1)))
  test('a duplicate wake-up after it re-queued does nothing', () => {
    expectPureInert(h, reachPure(h, 'pending', { via: [...failures(1).events, due(firstDue)] }), due(firstDue))
  })
  test('an old wake-up during a later, longer wait does nothing', () => {
    expectPureInert(h, reachPure(h, 'retrying', { via: failures(2).events }), due(firstDue))
  })
  for (const state of ['success', 'failed']) {
    test(`a wake-up in ${state} does nothing`, () => expectPureInert(h, reachPure(h, state), due(T0 + 24 * 60 * MIN)))
  }
  test('a late outcome after the attempt failed does nothing', () => expectPureInert(h, reachPure(h, 'retrying'), ok(T0 + 2 * SEC)))
  test('the next attempt is numbered after the failed ones', () => {
    const { snapshot } = walk(h, [...failures(2).events, due(T0 + SEC + 30 * SEC + 2 * MIN)])
    expect(snapshot.value).toBe('pending')
    expect(snapshot.context.attempts).toBe(2)
  })
})

describe('webhook delivery: snapshots', () => pureRoundTrips(h))

describe('webhook delivery: with a fake deliver effect', () => {
  test('fails, waits for its timer, succeeds; attempts numbered 1, 2', async () => {
    const seen: DeliverInput[] = []
    const outcomes = [false, true]
    let at = T0
    const machine = webhookDeliveryMachine.provide({
      actors: {
        deliver: fromPromise<DeliverOutput, DeliverInput>(async ({ input }) => {
          seen.push(input)
          at += SEC
          const okNow = outcomes.shift()!
          return { ok: okNow, at, status: okNow ? 200 : 500, error: okNow ? null : 'HTTP 500', retryable: true }
        }),
      },
    })
    const actor = createActor(machine, { input: { id: 'dlv_7', maxRetries: 1 } }).start()
    await waitFor(actor, (s) => s.value === 'retrying')
    actor.send({ type: 'timer.due', at: actor.getSnapshot().context.nextAttemptAt!, name: 'retry' })
    await waitFor(actor, (s) => s.value === 'success')
    expect(seen).toEqual([
      { deliveryId: 'dlv_7', attempt: 1, round: 0 },
      { deliveryId: 'dlv_7', attempt: 2, round: 0 },
    ])
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 2, responseStatus: 200, completedAt: T0 + 2 * SEC })
    actor.stop()
  })

  test('a crash mid-attempt re-runs the attempt when the snapshot is restored', async () => {
    const hang = webhookDeliveryMachine.provide({ actors: { deliver: fromPromise<DeliverOutput, DeliverInput>(() => new Promise<DeliverOutput>(() => {})) } })
    const first = createActor(hang, { input: { id: 'dlv_8', maxRetries: 3 } }).start()
    const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()))
    first.stop()
    const runs: DeliverInput[] = []
    const again = webhookDeliveryMachine.provide({
      actors: {
        deliver: fromPromise<DeliverOutput, DeliverInput>(async ({ input }) => {
          runs.push(input)
          return { ok: true, at: T0, status: 204, error: null, retryable: true }
        }),
      },
    })
    const restored = createActor(again, { snapshot: persisted } as any).start()
    await waitFor(restored, (s) => s.value === 'success')
    expect(runs).toEqual([{ deliveryId: 'dlv_8', attempt: 1, round: 0 }])
    restored.stop()
  })

  test('attempts counts the number an attempt was sent as; a POST retry starts a new round', async () => {
    const runs: DeliverInput[] = []
    // As after a crash: the effect sent attempt 3 though the chart had counted none.
    let next = 3
    const machine = webhookDeliveryMachine.provide({
      actors: {
        deliver: fromPromise<DeliverOutput, DeliverInput>(async ({ input }) => {
          runs.push(input)
          return { ok: false, at: T0, status: 500, error: 'HTTP 500', retryable: true, attempt: next++ }
        }),
      },
    })
    const actor = createActor(machine, { input: { id: 'dlv_9', maxRetries: 2 } }).start()
    // Attempt 3 of max_retries + 1 = 3: no retry left, although the chart itself counted one.
    await waitFor(actor, (s) => s.value === 'failed')
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 3, round: 0 })
    next = 1
    actor.send({ type: 'delivery.retry', at: T0 })
    await waitFor(actor, (s) => s.value === 'retrying')
    expect(runs.at(-1)).toEqual({ deliveryId: 'dlv_9', attempt: 1, round: 1 })
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 1, round: 1 })
    actor.stop()
  })
})
