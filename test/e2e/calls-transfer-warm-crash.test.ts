/**
 * kill -9 while a warm transfer calls the person: the call actor is durable, the sandbox network
 * (in the process) is not, so after the restart the call ends as any dropped call (`hangup:
 * failed`, at its last heartbeat) and its open transfer closes with it (`outcome: failed`), never
 * left `connected` nor `consulting`. The real service in a child process on the system clock.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'warm-crash-console-token-0123456789'
const MANAGER = '+14155550977'
const dir = mkdtempSync(join(tmpdir(), 'svc-warm-crash-'))
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

test('a crash while the person is being called: after the restart the call and its transfer say so', async () => {
  const port = await freePort()
  const call = childClient(port)
  const env = { DATA_DIR: dir, CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }
  child = await startChildService(port, env)
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Warm', plan: 'pro' })).body
  const agent = (
    await call('POST', '/api/v1/agents', dev.key, { name: 'Desk', voice: { answersCalls: true }, transfers: [{ name: 'Manager', phoneNumber: MANAGER, whenToUse: 'complaints', mode: 'warm' }] })
  ).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550960', source: 'rented', agent })).status).toBe(201)
  expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: '+14155550161' })).status).toBe(201)
  expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent('+14155550161')}`, TOKEN, { pickup: 'answer', hangupAfterMs: null })).status).toBe(200)
  // The person's phone rings for a minute: the crash comes while it rings.
  expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent(MANAGER)}`, TOKEN, { pickup: 'no_answer', ringMs: 60_000, hangupAfterMs: null })).status).toBe(200)
  const id = (await call('POST', '/api/v1/calls', dev.key, { to: '+14155550161', purpose: 'Hello, this is the desk.' })).body.id
  let live: any = null
  for (let i = 0; i < 500 && !(live?.status === 'connected' && live?.transcript?.length > 0); i++) {
    live = (await call('GET', `/api/v1/calls/${id}`, dev.key)).body
    await Bun.sleep(20)
  }
  const asked = await call('POST', `/api/v1/calls/${id}/transfer`, dev.key, { destination: 'Manager' })
  expect(asked.status).toBe(202)
  expect(asked.body.transfer).toMatchObject({ mode: 'warm', outcome: null })
  await Bun.sleep(500)
  const killedAt = Date.now()
  child.kill('SIGKILL')
  await child.exited

  child = await startChildService(port, env)
  const done = await until(
    'the call analysed after the restart',
    async () => (await call('GET', `/api/v1/calls/${id}`, dev.key)).body,
    (c) => !!c.analysedAt,
    { withinMs: 10_000, everyMs: 20 },
  )
  expect(done).toMatchObject({ status: 'completed', hangup: 'failed', transfer: { to: 'Manager', mode: 'warm', outcome: 'failed', seconds: 0, answeredAt: null } })
  expect(done.transfer.error).toBe('the caller left before the person was connected')
  expect(Date.parse(done.endedAt)).toBeLessThanOrEqual(killedAt)
  expect(Date.parse(done.transfer.endedAt)).toBeLessThanOrEqual(killedAt)
}, 60_000)
