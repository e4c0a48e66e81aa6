/**
 * What a call cut by kill -9 keeps: it ends (and is billed) at the last moment it was known live,
 * not when the service came back (a ringing one when it began to ring), and its recording is finished from the audio recorded before the
 * crash, so the link `call.analysed` advertises plays. The real service in a child process on the
 * system clock, the sandbox network and speech engines.
 */
import { Database } from 'bun:sqlite'
import { afterAll, afterEach, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'call-drop-console-token-0123456789'
// How long the call runs after the agent's first line is heard, and how long the service stays
// down: seconds either way, so a call billed to the restart would show it plainly.
const LIVE_MS = 3_000
const DOWN_MS = 4_000
const dir = mkdtempSync(join(tmpdir(), 'svc-call-drop-end-'))
const endingDir = mkdtempSync(join(tmpdir(), 'svc-call-drop-ending-'))
let child: Subprocess | null = null

// Each test leaves its last service running; the next test starts its own.
afterEach(async () => {
  child?.kill('SIGKILL')
  await child?.exited
  child = null
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(endingDir, { recursive: true, force: true })
})

/** A workspace whose agent records its calls, a contact who answers, and the call placed to them. */
async function recordedCall(call: ReturnType<typeof childClient>, hangupAfterMs: number | null): Promise<{ id: string; key: string }> {
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Dropped', plan: 'pro' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Caller', voice: { answersCalls: true, recordCalls: true } })).body.id
  expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
  expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550970', source: 'rented', agent })).status).toBe(201)
  expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: '+14155550171' })).status).toBe(201)
  expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent('+14155550171')}`, TOKEN, { pickup: 'answer', hangupAfterMs })).status).toBe(200)
  const placed = await call('POST', '/api/v1/calls', dev.key, { to: '+14155550171', purpose: 'Your appointment tomorrow' })
  expect(placed.status).toBe(202)
  return { id: placed.body.id, key: dev.key }
}

/** Polls the call until it is analysed. */
async function analysed(call: ReturnType<typeof childClient>, id: string, key: string): Promise<any> {
  return until(
    'the call analysed',
    async () => (await call('GET', `/api/v1/calls/${id}`, key)).body,
    (c) => !!c.analysedAt,
    { withinMs: 10_000, everyMs: 20 },
  )
}

/** Fetches the recording's link from the child service: the WAV's bytes (status 200) or the status. */
async function play(port: number, url: string): Promise<{ status: number; bytes: Uint8Array }> {
  const res = await fetch(url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${port}`))
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) }
}

test('a call dropped by kill -9 ends at its last heartbeat, and its recording is finished', async () => {
  const port = await freePort()
  const call = childClient(port)
  const env = { DATA_DIR: dir, CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }
  child = await startChildService(port, env)
  const { id, key } = await recordedCall(call, null)
  let live: any = null
  for (let i = 0; i < 500 && !(live?.transcript?.length > 0 && live?.recording); i++) {
    live = (await call('GET', `/api/v1/calls/${id}`, key)).body
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
  const done = await analysed(call, id, key)
  expect(done).toMatchObject({ status: 'completed', hangup: 'failed', recording: { ready: true, url: live.recording.url } })
  const answeredAt = Date.parse(done.answeredAt)
  const endedAt = Date.parse(done.endedAt)
  console.log(`dropped call: live ${((killedAt - answeredAt) / 1000).toFixed(1)} s until kill -9, ended ${((endedAt - answeredAt) / 1000).toFixed(1)} s after its answer, billed ${done.seconds} s`)
  // Ended at its last heartbeat, before the kill: not at the restart, DOWN_MS later.
  expect(endedAt).toBeGreaterThanOrEqual(answeredAt)
  expect(endedAt).toBeLessThanOrEqual(killedAt)
  expect(done.seconds).toBe(Math.round((endedAt - answeredAt) / 1000))

  // The recording plays: a WAV of what was said before the crash, the scratch files gone.
  const { status, bytes } = await play(port, done.recording.url)
  expect(status).toBe(200)
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

test('a crash while a finished call writes its end: the restart finishes its recording', async () => {
  const port = await freePort()
  const call = childClient(port)
  const env = { DATA_DIR: endingDir, CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }
  // The callee hangs up after LIVE_MS; the process dies once the call's end is told to its actor,
  // before the recording is mixed.
  child = await startChildService(port, { ...env, SERVICE_CRASH_AT: 'call.media.ending' })
  const { id, key } = await recordedCall(call, LIVE_MS)
  await child.exited
  expect(child.signalCode).toBe('SIGKILL')

  child = await startChildService(port, env)
  const done = await analysed(call, id, key)
  expect(done).toMatchObject({ status: 'completed', recording: { ready: true } })
  const { status, bytes } = await play(port, done.recording.url)
  expect(status).toBe(200)
  expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('RIFF')
  expect(readdirSync(join(endingDir, 'tmp', 'recordings'))).toEqual([])
}, 60_000)

test('a ringing call cut by kill -9 ends when it was last known, not at the restart', async () => {
  const port = await freePort()
  const call = childClient(port)
  const ringingDir = mkdtempSync(join(tmpdir(), 'svc-call-drop-ringing-'))
  const env = { DATA_DIR: ringingDir, CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' }
  try {
    child = await startChildService(port, env)
    const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Ringing', plan: 'pro' })).body
    const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Caller', voice: { answersCalls: true } })).body.id
    expect((await call('POST', `/agents/${agent}/publish`, dev.key, {})).status).toBe(200)
    expect((await call('POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550972', source: 'rented', agent })).status).toBe(201)
    expect((await call('POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: '+14155550173' })).status).toBe(201)
    // It rings a minute, longer than the test takes to kill it: the kill finds it ringing.
    expect((await call('PUT', `/console/sandbox/phones/${encodeURIComponent('+14155550173')}`, TOKEN, { pickup: 'answer', ringMs: 60_000 })).status).toBe(200)
    const placed = await call('POST', '/api/v1/calls', dev.key, { to: '+14155550173', purpose: 'Your appointment tomorrow' })
    expect(placed.status).toBe(202)
    expect(placed.body.status).toBe('ringing')
    await Bun.sleep(LIVE_MS)
    const killedAt = Date.now()
    child.kill('SIGKILL')
    await child.exited
    await Bun.sleep(DOWN_MS)

    child = await startChildService(port, env)
    const done = await analysed(call, placed.body.id, dev.key)
    expect(done).toMatchObject({ status: 'failed', seconds: 0, answeredAt: null })
    const startedAt = Date.parse(done.startedAt)
    const endedAt = Date.parse(done.endedAt)
    console.log(`ringing call: rang ${((killedAt - startedAt) / 1000).toFixed(1)} s until kill -9, ended ${((endedAt - startedAt) / 1000).toFixed(1)} s after it began to ring`)
    // Ended at the last moment it was known, before the kill: not at the restart, DOWN_MS later.
    expect(endedAt).toBeGreaterThanOrEqual(startedAt)
    expect(endedAt).toBeLessThanOrEqual(killedAt)
  } finally {
    child?.kill('SIGKILL')
    await child?.exited
    child = null
    rmSync(ringingDir, { recursive: true, force: true })
  }
}, 60_000)
