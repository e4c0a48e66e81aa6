/**
 * Webhook deliveries backed up when the service is stopped gracefully (SIGTERM, drain) are
 * delivered after the restart on the same DATA_DIR. The real service in a child process: a v1
 * webhook to a receiver answering 800 ms after the SIGTERM is sent (its lane backs up) and a
 * legacy endpoint to a fast receiver, both subscribed to `message.received`; a burst of inbound
 * messages, SIGTERM while deliveries wait, a clean exit after a short drain, a restart — and every
 * acknowledged message's event reaches each receiver. The fast legacy receiver has usually had
 * everything before the stop, so this holds a v1 backlog across the stop, not a legacy one.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server, Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'webhook-drain-restart-console-token-01'
// 60 messages behind a lane of 16 at 800 ms each: ~3 s of backlog, far more than the drain below.
const MESSAGES = 60
const SLOW_DELAY_MS = 800
const SERVICE_ENV = { CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', DRAIN_SECONDS: '1' }

let receiver: Server<unknown>
const hits = { slow: [] as string[], legacy: [] as string[] }
let dataDir = ''
let child: Subprocess | null = null
// The slow receiver holds every answer until the SIGTERM is sent, so the lane is backed up then however slowly the burst went in.
let release: () => void = () => {}
const stopSent = new Promise<void>((r) => (release = r))

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-drain-restart-'))
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const text = await req.text()
      if (new URL(req.url).pathname === '/slow') {
        await stopSent
        await Bun.sleep(SLOW_DELAY_MS)
        hits.slow.push(text)
      } else hits.legacy.push(text)
      return new Response('{}')
    },
  })
})

afterAll(() => {
  child?.kill('SIGKILL')
  receiver?.stop(true)
  rmSync(dataDir, { recursive: true, force: true })
})

test('stopped with SIGTERM while webhook deliveries are backed up: restarted, every event reaches every subscriber', async () => {
  const port = await freePort()
  const call = childClient(port)
  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Drain', plan: 'scale' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Ava' })).body.id
  const agentNumber = (await call('GET', `/agents/${agent}/status`, dev.key)).body.agent_id
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550600', source: 'rented', channel: 'chatapp', agent, externalAgents: true })).status).toBe(201)
  expect((await call('POST', '/api/v1/webhooks', dev.key, { agent, url: `http://127.0.0.1:${receiver.port}/slow`, events: ['message.received'] })).status).toBe(201)
  const legacy = await call('POST', '/webhooks/endpoints', dev.key, { url: `http://127.0.0.1:${receiver.port}/legacy`, event_types: ['message.received'], agent_id: agentNumber })
  expect(legacy.status).toBe(200)

  const write = (i: number) => call('POST', `/console/workspaces/${dev.id}/inbound`, TOKEN, { channel: 'chatapp', from: `+1415556${String(1000 + i)}`, text: `Hello ${i}` })
  const answers = await Promise.all(Array.from({ length: MESSAGES }, (_, i) => write(i)))
  for (const a of answers) expect(a.status).toBe(201)
  const acknowledged = answers.map((a) => a.body.messageId as string)

  child.kill('SIGTERM')
  release()
  await child.exited
  const beforeRestart = { slow: hits.slow.length, legacy: hits.legacy.length }
  const missing = (list: string[]) => acknowledged.filter((id) => !list.some((body) => body.includes(id)))
  // The slow lane was still backed up when the service stopped: at most its 16 in flight answered.
  expect(beforeRestart.slow).toBeLessThanOrEqual(16)

  const restarted = Date.now()
  child = await startChildService(port, { ...SERVICE_ENV, DATA_DIR: dataDir })
  await until(
    'every acknowledged message delivered after the restart',
    () => ({ slow: missing(hits.slow), legacy: missing(hits.legacy) }),
    (left) => left.slow.length === 0 && left.legacy.length === 0,
    { withinMs: 60_000, everyMs: 50 },
  )
  console.log(
    `before restart: v1 ${beforeRestart.slow}, legacy ${beforeRestart.legacy}; after ${Date.now() - restarted} ms: v1 missing ${missing(hits.slow).length}, legacy missing ${missing(hits.legacy).length}`,
  )
  expect(missing(hits.slow)).toEqual([])
  expect(missing(hits.legacy)).toEqual([])
  child.kill('SIGKILL')
  await child.exited
  child = null
}, 120_000)
