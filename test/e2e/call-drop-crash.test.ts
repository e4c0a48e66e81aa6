/**
 * What a call cut by kill -9 keeps: it ends (and is billed) at the last moment it was known live,
 * not when the service came back, and its recording is finished from the audio recorded before the
 * crash, so the link `call.analysed` advertises plays. The real service in a child process on the
 * system clock, the sandbox network and speech engines.
 */
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'

const TOKEN = 'call-drop-console-token-0123456789'
// How long the call runs after the agent's first line is heard, and how long the service stays
// down: seconds either way, so a call billed to the restart would show it plainly.
const LIVE_MS = 3_000
const DOWN_MS = 4_000
const dir = mkdtempSync(join(tmpdir(), 'svc-call-drop-end-'))
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

test('a call dropped by kill -9 ends at its last heartbeat, and its recording is finished', async () => {
  const port = await freePort()
  const call = childClient(port)
  const env = { DATA_DIR: dir, CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }
  child = await startChildService(port, env)
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Dropped', plan: 'pro' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Caller', voice: { answersCalls: true, recordCalls: true } })).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550970', source: 'rented', agent })).status).toBe(201)
  expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: '+14155550171' })).status).toBe(201)
  expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent('+14155550171')}`, TOKEN, { pickup: 'answer', hangupAfterMs: null })).status).toBe(200)
  const id = (await call('POST', '/api/v1/calls', dev.key, { to: '+14155550171', purpose: 'Your appointment tomorrow' })).body.id
  let live: any = null
  for (let i = 0; i < 500 && !(live?.transcript?.length > 0 && live?.recording); i++) {
    live = (await call('GET', `/api/v1/calls/${id}`, dev.key)).body
    await Bun.sleep(20)
  }
  expect(live).toMatchObject({ status: 'connected', recording: { ready: false } })
  await Bun.sleep(LIVE_MS)
  const killedAt = Date.now()
  child.kill('SIGKILL')
  await child.exited
  // The recorder's raw sides are left in the scratch space.
  expect(readdirSync(join(dir, 'tmp', 'recordings')).sort()).toEqual([`${id}-1.agent.raw`, `${id}-1.caller.raw`])
  await Bun.sleep(DOWN_MS)

  child = await startChildService(port, env)
  let done: any = null
  for (let i = 0; i < 500; i++) {
    done = (await call('GET', `/api/v1/calls/${id}`, dev.key)).body
    if (done.analysedAt) break
    await Bun.sleep(20)
  }
  expect(done).toMatchObject({ status: 'completed', hangup: 'failed', recording: { ready: true, url: live.recording.url } })
  const answeredAt = Date.parse(done.answeredAt)
  const endedAt = Date.parse(done.endedAt)
  console.log(`dropped call: live ${((killedAt - answeredAt) / 1000).toFixed(1)} s until kill -9, ended ${((endedAt - answeredAt) / 1000).toFixed(1)} s after its answer, billed ${done.seconds} s`)
  // Ended at its last heartbeat, before the kill: not at the restart, DOWN_MS later.
  expect(endedAt).toBeGreaterThanOrEqual(answeredAt)
  expect(endedAt).toBeLessThanOrEqual(killedAt)
  expect(done.seconds).toBe(Math.round((endedAt - answeredAt) / 1000))

  // The recording plays: a WAV of what was said before the crash, the scratch files gone.
  const wav = await fetch(done.recording.url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${port}`))
  expect(wav.status).toBe(200)
  const bytes = new Uint8Array(await wav.arrayBuffer())
  expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('RIFF')
  // 8 kHz, 16-bit mono: 16,000 bytes a second, a 44-byte header; at least the LIVE_MS it ran.
  expect((bytes.length - 44) / 16_000).toBeGreaterThanOrEqual(LIVE_MS / 1000)
  expect(readdirSync(join(dir, 'tmp', 'recordings'))).toEqual([])

  // The call's minutes are billed for the seconds it ran.
  child.kill('SIGKILL')
  await child.exited
  child = null
  const db = new Database(join(dir, 'service.db'), { readonly: true })
  const minutes = db
    .query<{ doc: string }, []>(`SELECT doc FROM "usage_records"`)
    .all()
    .map((r) => JSON.parse(r.doc))
    .filter((r) => r.kind === 'call_minute')
  db.close()
  expect(minutes.map((r) => r.seconds)).toEqual([done.seconds])
}, 60_000)
