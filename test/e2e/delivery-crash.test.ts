/**
 * Legacy webhook deliveries across kill -9: the real service in a child process,
 * three legacy endpoints on one agent, one test-chat message (chat.message.completed), the process
 * killed at every point between the event and the delivery's acknowledgement — at named crash
 * points (src/crash-points.ts) and at timed kills right after the answer — then restarted on the
 * same DATA_DIR. Checked for every kill point:
 * - nothing lost: every endpoint received the event;
 * - nothing sent again after a success was recorded, and no attempt number sent twice for one
 *   delivery id (a re-made attempt goes out as the next number);
 * - the record's `attempts` is the highest attempt number sent, and its status is final;
 * - exactly one request per delivery to the endpoints that answer 200, except when the kill fell
 *   between their 200 and its recording (`delivery.answered`): that one is sent again, as attempt 2
 *   (at least once; receivers de-duplicate by x-service-delivery-id).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server, Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'delivery-crash-console-token-0123456789'
const HOUR = 3_600_000
const SERVICE_ENV = { SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }

interface Hit {
  path: string
  delivery: string
  attempt: number
}

let receiver: Server<unknown>
const hits: Hit[] = []
const dirs: string[] = []
let child: Subprocess | null = null

beforeAll(() => {
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      await req.text()
      hits.push({ path, delivery: req.headers.get('x-service-delivery-id') ?? '', attempt: Number(req.headers.get('x-service-delivery-attempt')) })
      return new Response('{}', { status: path.endsWith('/fails') ? 500 : 200 })
    },
  })
})

afterAll(() => {
  child?.kill('SIGKILL')
  receiver?.stop(true)
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

type EndpointName = 'ok-1' | 'ok-2' | 'fails'
const RETRIES: Record<EndpointName, number> = { 'ok-1': 3, 'ok-2': 3, fails: 1 }

/**
 * One run: set up, send one chat message, die at `crashAt` (or `killAfterMs` after the answer),
 * restart, settle, check the invariants. Returns the attempt numbers each endpoint was sent.
 */
async function run(label: string, opts: { crashAt?: string; killAfterMs?: number; endpoints: EndpointName[] }): Promise<Record<string, number[]>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-dlv-crash-'))
  dirs.push(dataDir)
  const port = await freePort()
  const call = childClient(port)
  const prefix = `/${label}`
  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir, SERVICE_CRASH_AT: opts.crashAt })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Crash', plan: 'pro' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Ava' })).body.id
  const agentNumber = (await call('GET', `/agents/${agent}/status`, dev.key)).body.agent_id
  const endpoints: number[] = []
  for (const name of opts.endpoints) {
    const ep = await call('POST', '/webhooks/endpoints', dev.key, {
      url: `http://127.0.0.1:${receiver.port}${prefix}/${name}`,
      event_types: ['chat.message.completed'],
      agent_id: agentNumber,
      max_retries: RETRIES[name],
    })
    expect(ep.status).toBe(200)
    endpoints.push(ep.body.endpoint.id)
  }
  const answered = call('POST', `/api/v1/agents/${agent}/test-chat`, dev.key, { message: 'Hello there' }).catch(() => null)
  if (opts.killAfterMs !== undefined) {
    await answered
    await Bun.sleep(opts.killAfterMs)
    child.kill('SIGKILL')
  }
  await answered
  await child.exited
  // Killed: by the crash point, or by us.
  expect(child.signalCode).toBe('SIGKILL')

  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir })
  const mine = () => hits.filter((h) => h.path.startsWith(`${prefix}/`))
  await until(`${label}: every endpoint reached`, () => opts.endpoints.every((n) => mine().some((h) => h.path === `${prefix}/${n}`)), { withinMs: 10_000, everyMs: 20 })
  // The failing endpoint's one retry (max_retries 1) is a durable timer: move the clock past it.
  for (let i = 0; i < 3; i++) await call('POST', '/console/clock/advance', TOKEN, { ms: 2 * HOUR })
  const records = async () => Promise.all(endpoints.map(async (id) => (await call('GET', `/webhooks/endpoints/${id}/deliveries`, dev.key)).body.deliveries as any[]))
  await until(`${label}: every delivery final`, async () => (await records()).every((list) => list.length === 1 && ['success', 'failed'].includes(list[0].status)), { withinMs: 10_000, everyMs: 20 })
  await Bun.sleep(100)
  const final = await records()
  child.kill('SIGKILL')
  await child.exited
  child = null

  const byDelivery = new Map<string, Hit[]>()
  for (const h of mine()) byDelivery.set(h.delivery, [...(byDelivery.get(h.delivery) ?? []), h])
  const sentTo: Record<string, number[]> = {}
  opts.endpoints.forEach((name, i) => {
    const record = final[i][0]
    const sent = byDelivery.get(record.id) ?? []
    const attempts = sent.map((h) => h.attempt)
    sentTo[name] = attempts
    expect(sent.every((h) => h.path === `${prefix}/${name}`)).toBe(true)
    // No attempt number sent twice: a re-made attempt goes out as a later number.
    expect({ name, increasing: attempts.every((a, k) => k === 0 || a > attempts[k - 1]) }).toEqual({ name, increasing: true })
    // The record counts up to the last number sent, and is final.
    expect({ name, status: record.status, attempts: record.attempts }).toEqual({ name, status: name === 'fails' ? 'failed' : 'success', attempts: attempts.at(-1) })
  })
  return sentTo
}

describe('legacy deliveries survive kill -9 at every point', () => {
  // One endpoint, so "the first arrival at the point" is this delivery's: exact expectations.
  const cases: [string, number[]][] = [
    // Recorded, not dispatched: the restart dispatches it; one request.
    ['event.recorded', [1]],
    // Delivery record made, actor not spawned: the re-dispatch spawns it; one request.
    ['delivery.queued', [1]],
    // Attempt 1 claimed, never sent: the resumed attempt goes out as 2.
    ['delivery.claimed', [2]],
    // 200 received, not recorded: sent again, as 2 (the one window where at-least-once shows).
    ['delivery.answered', [1, 2]],
    // Success recorded before the chart heard of it: never sent again.
    ['delivery.succeeded', [1]],
  ]
  for (const [crashAt, expected] of cases) {
    test(`killed at ${crashAt}: sent as ${JSON.stringify(expected)}`, async () => {
      const sent = await run(crashAt.replace('.', '-'), { crashAt, endpoints: ['ok-1'] })
      expect(sent['ok-1']).toEqual(expected)
    }, 30_000)
  }

  test('killed right after the event was dispatched: nothing lost, at most one re-send', async () => {
    const sent = await run('dispatched', { crashAt: 'event.dispatched', endpoints: ['ok-1', 'ok-2', 'fails'] })
    for (const name of ['ok-1', 'ok-2'] as const) expect([[1], [1, 2], [2]]).toContainEqual(sent[name])
  }, 30_000)

  for (const killAfterMs of [0, 5, 25]) {
    test(`killed ${killAfterMs} ms after the answer, three endpoints: nothing lost, no attempt number repeated`, async () => {
      const sent = await run(`timed-${killAfterMs}`, { killAfterMs, endpoints: ['ok-1', 'ok-2', 'fails'] })
      for (const name of ['ok-1', 'ok-2'] as const) expect(sent[name].length).toBeLessThanOrEqual(2)
    }, 30_000)
  }
})
