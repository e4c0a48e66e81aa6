/**
 * Simulation runs in the e2e tests: a run of a suite started over the v1 API, waited for until it
 * is over. Its calls take real audio time, longer on a loaded host: 120 s by default, polled every
 * 250 ms (a run's calls last seconds each).
 */
import { expect } from 'bun:test'
import type { TestServer } from './server'
import { type Poll, until } from './until'

const RUN_POLL: Poll = { withinMs: 120_000, everyMs: 250 }

/** Starts a run of `suiteId` (`body`: the run's options) and waits until its status is one of `over` (`done` unless said); the run. */
export async function runSuite(s: TestServer, key: string, suiteId: string, body: Record<string, unknown> = { target: 'draft' }, o: { poll?: Poll; over?: string[] } = {}): Promise<any> {
  const started = await s.api('POST', `/simulations/suites/${suiteId}/runs`, { key, body })
  expect(started.status, JSON.stringify(started.body)).toBe(202)
  const over = o.over ?? ['done']
  const done = await until(
    'the run is done',
    () => s.api('GET', `/simulations/runs/${started.body.id}`, { key }),
    (r) => over.includes(r.body.status),
    o.poll ?? RUN_POLL,
  )
  return done.body
}
