/** Forwarding to an owner that does not answer: the wait for its answer runs on the clock given. */
import { expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ForwardTimeoutError } from '../../actors/errors'
import { Forwarder } from '../../actors/forwarding'
import { ManualClock } from '../../src/clock'
import { openLocalCoordination } from '../../src/coordination/local'
import { createLogger } from '../../src/logger'

test('a request to an owner that never answers fails once the timeout passes on the clock', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'forwarding-'))
  const coordination = await openLocalCoordination(join(dir, 'coordination.db'))
  const clock = new ManualClock(0)
  const forwarder = new Forwarder({
    coordination,
    instanceId: 'here',
    logger: createLogger('silent'),
    timeoutMs: 2_000,
    clock,
    handle: async () => {
      throw new Error('no request reaches this instance')
    },
  })
  try {
    let failed: unknown = null
    const asked = forwarder.request('gone', { kind: 'ticket', id: 't1', event: { type: 'x' }, hops: 0 }).catch((err: unknown) => {
      failed = err
    })
    clock.advance(1_999)
    await new Promise((r) => setImmediate(r))
    expect(failed).toBeNull()
    clock.advance(1)
    await new Promise((r) => setImmediate(r))
    expect(failed).toBeInstanceOf(ForwardTimeoutError)
    await asked
  } finally {
    await forwarder.stop()
    await coordination.close()
    await rm(dir, { recursive: true, force: true })
  }
})
