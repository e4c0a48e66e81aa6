/**
 * Graceful shutdown of the real service in a child process (`bun src/index.ts`): SIGTERM during a
 * live sandbox call. `/health` answers 503 `draining`, a new call is refused with 503 and
 * Retry-After while reads still answer, the live call goes on until DRAIN_SECONDS (2 here) and is
 * then ended with the agent's goodbye (`hangup: answered`, transcript kept), and the process exits
 * 0. A second instance started on the same DATA_DIR reads the finished call.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { DRAINING_RETRY_AFTER_S } from '../../src/http/draining-gate'
import { VOICE_LINES } from '../../src/voice/phrases'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'draining-console-token-0123456789'
const DRAIN_SECONDS = 2
const dataDir = mkdtempSync(join(tmpdir(), 'svc-draining-'))
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

test('SIGTERM during a live call: health 503, new calls refused, the call ends with a goodbye, exit 0', async () => {
  const port = await freePort()
  const call = childClient(port)
  const env = { DATA_DIR: dataDir, CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', DRAIN_SECONDS: String(DRAIN_SECONDS) }
  child = await startChildService(port, env)
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Drain', plan: 'pro' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Caller', voice: { answersCalls: true } })).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550970', source: 'rented', agent })).status).toBe(201)
  for (const phone of ['+14155550171', '+14155550172']) {
    expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone })).status).toBe(201)
    expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent(phone)}`, TOKEN, { pickup: 'answer', ringMs: 0, hangupAfterMs: null })).status).toBe(200)
  }
  const id = (await call('POST', '/api/v1/calls', dev.key, { to: '+14155550171', purpose: 'Your appointment tomorrow' })).body.id
  let live: any = null
  // The agent's opening is written as the caller hears it: wait until it has been heard whole.
  for (let i = 0; i < 300 && live?.transcript?.[0]?.text !== 'Your appointment tomorrow'; i++) {
    live = (await call('GET', `/api/v1/calls/${id}`, dev.key)).body
    await Bun.sleep(20)
  }
  expect(live).toMatchObject({ status: 'connected', transcript: [{ speaker: 'agent', text: 'Your appointment tomorrow' }] })

  const signalledAt = Date.now()
  child.kill('SIGTERM')
  const health = await until503(port)
  expect(health).toEqual({ ok: false, status: 'draining' })

  // A new call would start work here: refused, with when to retry (elsewhere).
  const refused = await fetch(`http://127.0.0.1:${port}/api/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${dev.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to: '+14155550172', purpose: 'Hello' }),
  })
  expect(refused.status).toBe(503)
  expect(refused.headers.get('retry-after')).toBe(String(DRAINING_RETRY_AFTER_S))
  expect(((await refused.json()) as { error: string }).error).toMatch(/shutting down/)
  // The legacy surface refuses in its own shape.
  const legacy = await call('POST', `/agents/${agent}/publish`, dev.key, {})
  expect(legacy).toMatchObject({ status: 503, body: { status: 503 } })
  // Reads still answer, and the live call goes on until the deadline.
  const during = await call('GET', `/api/v1/calls/${id}`, dev.key)
  expect(during).toMatchObject({ status: 200, body: { status: 'connected' } })
  expect((await call('GET', '/api/v1/calls?limit=10', dev.key)).body.items).toHaveLength(1)

  expect(await child.exited).toBe(0)
  const tookMs = Date.now() - signalledAt
  expect(tookMs).toBeGreaterThanOrEqual(DRAIN_SECONDS * 1000)
  // The goodbye plays out (~5 s of sandbox speech at most), then the store closes.
  expect(tookMs).toBeLessThan(DRAIN_SECONDS * 1000 + 20_000)

  child = await startChildService(port, env)
  const done = await until(
    'the call analysed after the restart',
    async () => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body,
    (c) => !!c.analysedAt,
    { withinMs: 5_000, everyMs: 25 },
  )
  expect(done).toMatchObject({ status: 'completed', hangup: 'answered', error: null })
  const agentLines = done.transcript.filter((l: { speaker: string }) => l.speaker === 'agent').map((l: { text: string }) => l.text)
  expect(agentLines[0]).toBe('Your appointment tomorrow')
  expect(agentLines.at(-1)).toBe(VOICE_LINES.closing)
  // Started again, it takes calls.
  expect((await call('GET', '/health', TOKEN)).status).toBe(200)
}, 60_000)

async function until503(port: number): Promise<unknown> {
  const res = await until(
    '/health to answer 503',
    () => fetch(`http://127.0.0.1:${port}/health`),
    (r) => r.status === 503,
    5_000,
  )
  return res.json()
}
