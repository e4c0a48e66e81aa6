/**
 * The runtime's waits that measure the host (a route waiting for an actor to settle, a sender
 * waiting for a silent owner's lease to lapse) are set on the clock port, so a test steps them:
 * nothing lapses before its bound on the clock, and each gives up once it has passed.
 */
import { expect, test } from 'bun:test'
import { Dispatcher, type DispatcherParts } from '../../actors/dispatch'
import { ActorUnavailableError, ForwardTimeoutError } from '../../actors/errors'
import { SerialQueue } from '../../actors/serial-queue'
import { settled } from '../../actors/settle'
import type { Registration, StoredActor } from '../../actors/types'
import { ManualClock } from '../../src/clock'

/** Lets the promises the wait started settle; no time passes on the manual clock. */
const flush = async () => {
  for (let i = 0; i < 8; i++) await new Promise((r) => setImmediate(r))
}

/** Steps `clock` by `stepMs` up to `totalMs`, letting the wait run between steps. */
async function step(clock: ManualClock, totalMs: number, stepMs: number): Promise<void> {
  for (let t = 0; t < totalMs; t += stepMs) {
    clock.advance(stepMs)
    await flush()
  }
}

test('settle polls an actor whose effect never ends until its timeout passes on the clock, and no longer', async () => {
  const clock = new ManualClock(0)
  let reads = 0
  // cast: only `pendingWork` and `snapshot` are read by the wait
  const busy = { pendingWork: true, snapshot: {} } as unknown as StoredActor
  const target = {
    key: 'k:1',
    live: undefined,
    stored: async () => {
      reads++
      return busy
    },
    held: () => null,
    drained: async () => {},
    clock,
  }
  let failed: unknown = null
  void settled(target, 1_000).catch((err: unknown) => (failed = err))
  await flush()
  await step(clock, 950, 50)
  expect(failed).toBe(null)
  expect(reads).toBeGreaterThan(1)
  await step(clock, 50, 50)
  expect(failed).toBeInstanceOf(ActorUnavailableError)
})

test('an unanswered forward waits one lease ttl on the clock for the owner to lapse, then fails', async () => {
  const clock = new ManualClock(0)
  let looks = 0
  const parts = {
    queue: new SerialQueue(),
    leases: {
      ttlMs: 15_000,
      ownerOf: async () => {
        looks++
        return 'silent'
      },
    },
    residency: () => ({ acquire: async () => ({ type: 'remote', owner: 'silent' }), afterJob: () => {} }),
    forwarder: () => ({ request: () => Promise.reject(new ForwardTimeoutError('silent did not answer')) }),
    registration: () => ({}),
    draining: () => false,
    clock,
  }
  // cast: the dispatcher reads only these members of its parts on a forward that goes unanswered
  const dispatcher = new Dispatcher(parts as unknown as DispatcherParts)
  let failed: unknown = null
  // cast: a registration's kind is all a forward's key needs
  void dispatcher.dispatch({ kind: 'k' } as Registration, '1', { type: 'go' }, undefined, 0, false).catch((err: unknown) => (failed = err))
  await flush()
  await step(clock, 14_750, 250)
  expect(failed).toBe(null)
  expect(looks).toBeGreaterThan(50)
  await step(clock, 250, 250)
  expect(failed).toBeInstanceOf(ForwardTimeoutError)
})
