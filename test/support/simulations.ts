/**
 * Simulations in the e2e tests: the agent under test with the shop's FAQ as its knowledge, and a
 * run of a suite started over the v1 API, waited for until it is over. A run's calls take real
 * audio time, longer on a loaded host: 120 s by default, polled every 250 ms (each call lasts seconds).
 */
import { expect } from 'bun:test'
import type { TestServer } from './server'
import { type Poll, until } from './until'

const RUN_POLL: Poll = { withinMs: 120_000, everyMs: 250 }

/** The shop's opening hours, as its FAQ says them. */
export const HOURS_FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.`

/** The shop's FAQ: its opening hours and its parking. */
export const SHOP_FAQ = `${HOURS_FAQ}

Parking

Free parking for customers is behind the shop, entrance on Mill Lane.`

/** A draft agent (`agent`: its fields) whose knowledge is `faq`, as "Shop FAQ"; its id. */
export async function agentWithFaq(s: TestServer, key: string, agent: Record<string, unknown>, faq: string): Promise<string> {
  const made = await s.api('POST', '/agents', { key, body: agent })
  expect(made.status).toBe(201)
  const id = made.body.id as string
  expect((await s.api('POST', `/agents/${id}/knowledge`, { key, body: { text: faq, title: 'Shop FAQ' } })).status).toBe(201)
  return id
}

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
