import { describe, expect, test } from 'bun:test'
import {
  WEBHOOK_ENDPOINT_EFFECTS,
  canApply,
  endpointView,
  webhookEndpointMachine,
  type WebhookEndpointEvent,
} from '../../machines/webhook-endpoint'
import { expectInert, reach, refusals, roundTrips, starts, transitions, type Harness, type RefusedRow, type Row } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const ok = (at = T0): WebhookEndpointEvent => ({ type: 'delivery.succeeded', at, status: 200 })
const fail = (n: number): WebhookEndpointEvent => ({ type: 'delivery.failed', at: T0 + n, status: 500, error: `HTTP 500 #${n}` })
const fails = (count: number, from = 1) => Array.from({ length: count }, (_, i) => fail(from + i))
const enable: WebhookEndpointEvent = { type: 'endpoint.enable', at: T0 + 100 }

const h: Harness<WebhookEndpointEvent> = {
  machine: webhookEndpointMachine,
  effects: WEBHOOK_ENDPOINT_EFFECTS,
  input: { id: 'wh_1' },
  canApply,
  paths: {
    enabled: [],
    disabled: fails(5),
  },
}

describe('webhook endpoint: created', () => {
  starts(h, [{ name: 'POST webhooks', input: { id: 'wh_1' }, to: 'enabled', context: { failuresInARow: 0 } }])
})

// SPEC.md "Webhook endpoint (v1)" rows and the delivery rule they rest on.
const rows: Row<WebhookEndpointEvent>[] = [
  { from: 'enabled', event: fail(5), condition: 'fifth failed delivery in a row', to: 'disabled', via: fails(4), also: ['notifyEndpointDisabled'], context: { failuresInARow: 5, disabledReason: 'failures', lastError: 'switched off after 5 failed deliveries in a row: HTTP 500 #5', lastStatus: 500, lastSentAt: T0 + 5 } },
  { from: 'disabled', event: enable, condition: 'PATCH enabled: true', to: 'enabled', context: { failuresInARow: 0, disabledReason: null } },
  { from: 'enabled', event: { type: 'customer.deleted', at: T0 }, condition: 'customer deleted', to: 'disabled', context: { disabledReason: 'customer_deleted' } },
  { from: 'enabled', event: fail(1), condition: 'fewer than five in a row', to: 'enabled', context: { failuresInARow: 1, lastStatus: 500, lastError: 'HTTP 500 #1' } },
  { from: 'enabled', event: fail(8), condition: 'fourth in a row', to: 'enabled', via: fails(3, 5), context: { failuresInARow: 4 } },
  { from: 'enabled', event: ok(T0 + 9), condition: 'a success breaks the run', to: 'enabled', via: fails(4), context: { failuresInARow: 0, lastStatus: 200, lastSentAt: T0 + 9, lastError: 'HTTP 500 #4' } },
  { from: 'enabled', event: fail(20), condition: 'failures after a success start over', to: 'enabled', via: [...fails(4), ok(), ...fails(3, 10)], context: { failuresInARow: 4 } },
  { from: 'enabled', event: enable, condition: 'PATCH enabled: true while enabled', to: 'enabled', via: fails(3), context: { failuresInARow: 0 } },
  { from: 'enabled', event: { type: 'endpoint.disable', at: T0 }, condition: 'PATCH enabled: false', to: 'disabled', context: { disabledReason: 'request' } },
  { from: 'disabled', event: enable, condition: 'PATCH after the customer was restored', to: 'enabled', via: [{ type: 'customer.deleted', at: T0 }], context: { disabledReason: null } },
  { from: 'enabled', event: fail(30), condition: 'forgiven: five more needed', to: 'enabled', via: [...fails(5), enable, ...fails(3, 20)], context: { failuresInARow: 4 } },
]

const refused: RefusedRow<WebhookEndpointEvent>[] = [
  { from: 'disabled', event: fail(6), condition: 'nothing is attempted while off', says: 'not attempted' },
  { from: 'disabled', event: ok(T0 + 6), condition: 'nothing is attempted while off', says: 'not attempted' },
]

describe('webhook endpoint: transitions', () => transitions(h, rows))
describe('webhook endpoint: refused moves', () => refusals(h, refused))

describe('webhook endpoint: other moves', () => {
  test('customer deleted on a disabled endpoint changes nothing', () => expectInert(reach(h, 'disabled'), { type: 'customer.deleted', at: T0 + 50 }))
  test('the API view', () => {
    const s = reach(h, 'disabled').actor.getSnapshot()
    expect(endpointView(s)).toEqual({
      enabled: false,
      delivery: { failuresInARow: 5, lastStatus: 500, lastError: 'switched off after 5 failed deliveries in a row: HTTP 500 #5', lastSentAt: T0 + 5 },
    })
  })
})

describe('webhook endpoint: snapshots', () => roundTrips(h))
