/**
 * A booked call across kill -9: the real service in a child process books a call an hour ahead,
 * is killed, restarts on the same DATA_DIR, and when the manual clock reaches the booked time the
 * call rings exactly once (one row, attempt 1, same id) and completes.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'call-crash-console-token-0123456789'
const MIN = 60_000
const dataDir = mkdtempSync(join(tmpdir(), 'svc-call-crash-'))
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

test('a booked call survives kill -9 and rings exactly once', async () => {
  const port = await freePort()
  const call = childClient(port)
  child = await startChildService(port, { DATA_DIR: dataDir, SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent' })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Crash calls', plan: 'pro' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Caller', voice: { answersCalls: true } })).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550990', source: 'rented', agent })).status).toBe(201)
  expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: '+14155550191' })).status).toBe(201)
  expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent('+14155550191')}`, TOKEN, { pickup: 'answer', hangupAfterMs: 10_000 })).status).toBe(200)
  const now = Date.parse((await call('GET', '/console/clock', TOKEN)).body.now)
  const placed = await call('POST', '/api/v1/calls', dev.key, { to: '+14155550191', purpose: 'Your appointment', scheduledFor: new Date(now + 60 * MIN).toISOString() })
  expect(placed.status).toBe(202)
  const id = placed.body.id
  child.kill('SIGKILL')
  await child.exited

  child = await startChildService(port, { DATA_DIR: dataDir, SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent' })
  expect((await call('GET', `/api/v1/calls/${id}`, dev.key)).body.status).toBe('scheduled')
  await call('POST', '/console/clock/advance', TOKEN, { ms: 60 * MIN })
  await until(
    'the call to ring after the restart',
    async () => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body.status,
    (status) => status === 'connected',
    { withinMs: 4_000, everyMs: 20 },
  )
  // Later wake-ups (the timer re-offered, another advance) must not ring it again.
  await call('POST', '/console/clock/advance', TOKEN, { ms: 11_000 })
  const done = await until(
    'the call analysed',
    async () => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body,
    (c) => !!c.analysedAt,
    { withinMs: 4_000, everyMs: 20 },
  )
  expect(done).toMatchObject({ id, status: 'completed', attempt: 1, seconds: 10 })
  await call('POST', '/console/clock/advance', TOKEN, { ms: 2 * 60 * MIN })
  const rows = (await call('GET', '/api/v1/calls?limit=100', dev.key)).body.items.filter((c: { id: string }) => c.id === id)
  expect(rows).toHaveLength(1)
}, 30_000)

test('a call in progress at kill -9 is reported dropped after the restart, its transcript kept', async () => {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'svc-call-drop-'))
  const call = childClient(port)
  const env = { DATA_DIR: dir, SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }
  // The service the first test restarted is done with.
  child?.kill('SIGKILL')
  try {
    child = await startChildService(port, env)
    const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Drop', plan: 'pro' })).body
    const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Caller', voice: { answersCalls: true } })).body.id
    expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
    expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550980', source: 'rented', agent })).status).toBe(201)
    expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: '+14155550181' })).status).toBe(201)
    expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent('+14155550181')}`, TOKEN, { pickup: 'answer', hangupAfterMs: null })).status).toBe(200)
    const id = (await call('POST', '/api/v1/calls', dev.key, { to: '+14155550181', purpose: 'Your appointment tomorrow' })).body.id
    // The agent's line is written as it is heard (a second at a time): wait for the whole of it.
    const live = await until(
      "the agent's whole line heard",
      async () => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body,
      (c) => c.transcript?.[0]?.text === 'Your appointment tomorrow',
      { withinMs: 6_000, everyMs: 20 },
    )
    expect(live).toMatchObject({ status: 'connected', transcript: [{ speaker: 'agent', text: 'Your appointment tomorrow' }] })
    child.kill('SIGKILL')
    await child.exited

    child = await startChildService(port, env)
    const done = await until(
      'the dropped call analysed',
      async () => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body,
      (c) => !!c.analysedAt,
      { withinMs: 8_000, everyMs: 20 },
    )
    expect(done).toMatchObject({ status: 'completed', hangup: 'failed', error: 'the call was dropped: the service restarted while it was in progress' })
    expect(done.transcript[0]).toMatchObject({ speaker: 'agent', text: 'Your appointment tomorrow' })
  } finally {
    child?.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}, 40_000)
