/**
 * v1 deliveries queued behind a slow receiver survive kill -9. The probe that found the gap: a
 * receiver answering after 800 ms, a burst of events, the process killed while deliveries waited
 * in the endpoint's lane — those were stored `dispatched: true` and never sent, because the lane
 * lived in memory only. Now each delivery is owed in the store in the commit that marks its event
 * dispatched and taken over at the next start (events/owed-work.ts): the real service in a child
 * process dies right after the 40th `message.received` is dispatched (16 attempts in flight at the
 * receiver, the rest queued), restarts on the same DATA_DIR, and every acknowledged message's event
 * reaches the receiver — at least once, a repeat carrying the same event id.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server, Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { type SlowReceiver, startSlowReceiver } from '../support/slow-receiver'
import { until } from '../support/until'

const TOKEN = 'webhook-v1-crash-console-token-0123'
const MESSAGES = 40
// The slow receiver of the report: 16 attempts at a time (the lane's concurrency) each held this long.
const RECEIVER_DELAY_MS = 800
const SERVICE_ENV = { SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }

let receiver: Server<unknown>
let hits: SlowReceiver['hits'] = []
let dataDir = ''
let child: Subprocess | null = null

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-v1-crash-'))
  ;({ server: receiver, hits } = startSlowReceiver(RECEIVER_DELAY_MS))
})

afterAll(() => {
  child?.kill('SIGKILL')
  receiver?.stop(true)
  rmSync(dataDir, { recursive: true, force: true })
})

test(`killed with v1 deliveries queued behind an ${RECEIVER_DELAY_MS} ms receiver: restarted, every acknowledged message's event arrives`, async () => {
  const port = await freePort()
  const call = childClient(port)
  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir, SERVICE_CRASH_AT: `event.dispatched:message.received@${MESSAGES}` })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Slow receiver', plan: 'scale' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Ava' })).body.id
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550500', source: 'rented', channel: 'chatapp', agent, externalAgents: true })).status).toBe(201)
  expect((await call('POST', '/api/v1/webhooks', dev.key, { agent, url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.received'] })).status).toBe(201)

  // All but one at once, as customers write, each answered 201; the last one's dispatch kills the process.
  const write = (i: number) => call('POST', `/console/workspaces/${dev.id}/inbound`, TOKEN, { channel: 'chatapp', from: `+1415555${String(1000 + i)}`, text: `Hello ${i}` })
  const answers = await Promise.all(Array.from({ length: MESSAGES - 1 }, (_, i) => write(i)))
  for (const a of answers) expect(a.status).toBe(201)
  const acknowledged = answers.map((a) => a.body.messageId as string)
  expect(await write(MESSAGES - 1).catch(() => null)).toBeNull()
  await child.exited
  expect(child.signalCode).toBe('SIGKILL')
  // Deliveries were still waiting when it died: at most a lane's 16 had reached the receiver.
  await Bun.sleep(RECEIVER_DELAY_MS + 200)
  expect(new Set(hits.map((h) => h.messageId)).size).toBeLessThanOrEqual(16)

  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir })
  await until("every acknowledged message's event delivered", () => acknowledged.every((id) => hits.some((h) => h.messageId === id)), 30_000)
  // One event id per message, whether it arrived once or (sent as the process died) twice.
  const idsOf = new Map<string, Set<string>>()
  for (const h of hits) idsOf.set(h.messageId, (idsOf.get(h.messageId) ?? new Set()).add(h.eventId))
  for (const ids of idsOf.values()) expect(ids.size).toBe(1)
  // A repeat only for what was in flight at the kill.
  expect(hits.length - idsOf.size).toBeLessThanOrEqual(16)
  child.kill('SIGKILL')
  await child.exited
  child = null
}, 90_000)
