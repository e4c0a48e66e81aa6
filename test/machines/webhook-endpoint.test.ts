import { describe, expect, test } from 'bun:test'
import { createActor, fromPromise, waitFor } from 'xstate'
import { canApply, endpointView, type NotifyInput, WEBHOOK_ENDPOINT_EFFECTS, type WebhookEndpointEvent, webhookEndpointMachine } from '../../machines/webhook-endpoint'
import { effectDone, effectError, expectPureInert, type PureHarness, type PureRefusedRow, type PureRow, pureRefusals, pureRoundTrips, pureStarts, pureTransitions, reachPure } from './webhook-table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const ok = (at = T0): WebhookEndpointEvent => ({ type: 'delivery.succeeded', at, status: 200 })
const fail = (n: number): WebhookEndpointEvent => ({ type: 'delivery.failed', at: T0 + n, status: 500, error: `HTTP 500 #${n}` })
const fails = (count: number, from = 1) => Array.from({ length: count }, (_, i) => fail(from + i))
const enable: WebhookEndpointEvent = { type: 'endpoint.enable', at: T0 + 100 }
const notified = effectDone('notify')
const SWITCHED_OFF = 'switched off after 5 failed deliveries in a row: HTTP 500 #5'
const gone = (at: number): WebhookEndpointEvent => ({ type: 'customer.deleted', at, customerId: 'org_1' })
const CUSTOMER_GONE = 'switched off: customer org_1 was deleted'

const h: PureHarness = {
  machine: webhookEndpointMachine,
  effects: WEBHOOK_ENDPOINT_EFFECTS,
  input: { id: 'wh_1' },
  canApply,
  paths: {
    enabled: [],
    notifying: fails(5),
    disabled: [...fails(5), notified],
  },
}

describe('webhook endpoint: created', () => {
  pureStarts(h, [{ name: 'POST webhooks', input: { id: 'wh_1' }, to: 'enabled', context: { failuresInARow: 0 } }])
})

// docs/spec.md "Webhook endpoint (v1)" rows and the delivery rule they rest on; `notifying` is the
// effect state between the fifth failure and `disabled` (Events rule 8: the developer is told).
const rows: PureRow[] = [
  {
    from: 'enabled',
    event: fail(5),
    condition: 'fifth failed delivery in a row',
    to: 'notifying',
    via: fails(4),
    also: ['notify'],
    context: { failuresInARow: 5, disabledReason: 'failures', lastError: SWITCHED_OFF, lastStatus: 500, lastSentAt: T0 + 5 },
  },
  { from: 'notifying', event: notified, condition: 'developer notified', to: 'disabled', context: { disabledReason: 'failures', lastError: SWITCHED_OFF } },
  { from: 'notifying', event: effectError('notify', new Error('store down')), condition: 'notification failed', to: 'disabled', context: { disabledReason: 'failures' } },
  { from: 'disabled', event: enable, condition: 'PATCH enabled: true', to: 'enabled', context: { failuresInARow: 0, disabledReason: null } },
  { from: 'enabled', event: gone(T0), condition: 'customer deleted', to: 'disabled', via: fails(2), context: { disabledReason: 'customer_deleted', lastError: CUSTOMER_GONE, failuresInARow: 2 } },
  { from: 'enabled', event: fail(1), condition: 'fewer than five in a row', to: 'enabled', context: { failuresInARow: 1, lastStatus: 500, lastError: 'HTTP 500 #1' } },
  { from: 'enabled', event: fail(8), condition: 'fourth in a row', to: 'enabled', via: fails(3, 5), context: { failuresInARow: 4 } },
  {
    from: 'enabled',
    event: ok(T0 + 9),
    condition: 'a success breaks the run',
    to: 'enabled',
    via: fails(4),
    context: { failuresInARow: 0, lastStatus: 200, lastSentAt: T0 + 9, lastError: 'HTTP 500 #4' },
  },
  { from: 'enabled', event: fail(20), condition: 'failures after a success start over', to: 'enabled', via: [...fails(4), ok(), ...fails(3, 10)], context: { failuresInARow: 4 } },
  { from: 'enabled', event: enable, condition: 'PATCH enabled: true while enabled', to: 'enabled', via: fails(3), context: { failuresInARow: 0 } },
  { from: 'enabled', event: { type: 'endpoint.disable', at: T0 }, condition: 'PATCH enabled: false', to: 'disabled', context: { disabledReason: 'request' } },
  { from: 'notifying', event: enable, condition: 'PATCH enabled: true before the notice is stored', to: 'enabled', context: { failuresInARow: 0, disabledReason: null } },
  { from: 'notifying', event: gone(T0 + 7), condition: 'customer deleted meanwhile', to: 'disabled', context: { disabledReason: 'customer_deleted', lastError: CUSTOMER_GONE } },
  { from: 'disabled', event: enable, condition: 'PATCH after the customer was restored', to: 'enabled', via: [gone(T0)], context: { disabledReason: null, lastError: CUSTOMER_GONE } },
  { from: 'enabled', event: fail(30), condition: 'forgiven: five more needed', to: 'enabled', via: [...fails(5), notified, enable, ...fails(3, 20)], context: { failuresInARow: 4 } },
]

const refused: PureRefusedRow[] = [
  { from: 'disabled', event: fail(6), condition: 'nothing is attempted while off', says: 'not attempted' },
  { from: 'disabled', event: ok(T0 + 6), condition: 'nothing is attempted while off', says: 'not attempted' },
  { from: 'notifying', event: fail(6), condition: 'an attempt already in flight reports late', says: 'not attempted' },
  { from: 'notifying', event: ok(T0 + 6), condition: 'an attempt already in flight reports late', says: 'not attempted' },
]

describe('webhook endpoint: transitions', () => pureTransitions(h, rows))
describe('webhook endpoint: refused moves', () => pureRefusals(h, refused))

describe('webhook endpoint: other moves', () => {
  test('customer deleted on a disabled endpoint changes nothing', () => expectPureInert(h, reachPure(h, 'disabled'), gone(T0 + 50)))
  test('the API view', () => {
    const s = reachPure(h, 'disabled')
    expect(endpointView(s as any)).toEqual({
      enabled: false,
      delivery: { failuresInARow: 5, lastStatus: 500, lastError: SWITCHED_OFF, lastSentAt: T0 + 5 },
    })
    expect(endpointView(reachPure(h, 'notifying') as any).enabled).toBe(false)
  })
})

describe('webhook endpoint: snapshots', () => pureRoundTrips(h))

describe('webhook endpoint: with a fake notify effect', () => {
  test('five failures run notify once with the endpoint, the reason and the instant, then rest disabled', async () => {
    const calls: NotifyInput[] = []
    const machine = webhookEndpointMachine.provide({ actors: { notify: fromPromise<void, NotifyInput>(async ({ input }) => void calls.push(input)) } })
    const actor = createActor(machine, { input: { id: 'wh_9' } }).start()
    for (const e of fails(5)) actor.send(e)
    await waitFor(actor, (s) => s.value === 'disabled')
    expect(calls).toEqual([{ endpointId: 'wh_9', lastError: SWITCHED_OFF, at: T0 + 5 }])
    actor.send(fail(6))
    expect(actor.getSnapshot().context.failuresInARow).toBe(5)
    actor.stop()
  })

  test('a crash while notifying re-runs notify when the snapshot is restored', async () => {
    const never = webhookEndpointMachine.provide({ actors: { notify: fromPromise<void, NotifyInput>(() => new Promise<void>(() => {})) } })
    const first = createActor(never, { input: { id: 'wh_8' } }).start()
    for (const e of fails(5)) first.send(e)
    const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()))
    first.stop()
    let runs = 0
    const again = webhookEndpointMachine.provide({ actors: { notify: fromPromise<void, NotifyInput>(async () => void runs++) } })
    const restored = createActor(again, { snapshot: persisted } as any).start()
    await waitFor(restored, (s) => s.value === 'disabled')
    expect(runs).toBe(1)
    restored.stop()
  })
})
