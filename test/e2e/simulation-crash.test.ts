/**
 * A simulation run across kill -9: the real service in a child process runs a suite of a short
 * and a long scripted caller, is killed the moment the short call's result is written (the long
 * call still talking), restarts on the same DATA_DIR and finishes the run: the judged call is not
 * played again, the long call — dropped by the restart, as the sandbox network's calls live in the
 * process — is placed again and passes, and `simulation.finished` is recorded once.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from '../support/child-service'
import { until } from '../support/until'

const TOKEN = 'simulation-crash-console-token-0123456789'
const dataDir = mkdtempSync(join(tmpdir(), 'svc-simulation-crash-'))
let child: Subprocess | null = null

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

test('kill -9 mid-run: after the restart the run finishes, nothing judged twice', async () => {
  const port = await freePort()
  const call = childClient(port)
  const env = { DATA_DIR: dataDir, SERVICE_CLOCK: 'manual', CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'silent', STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox', MEDIA_CHUNK_MS: '100' }
  child = await startChildService(port, { ...env, SERVICE_CRASH_AT: 'simulation.result.written' })
  const dev = (await call('POST', '/console/workspaces', TOKEN, { name: 'Crash sims', plan: 'free' })).body
  const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true } })).body.id
  const scenario = async (name: string, lines: string[]) =>
    (await call('POST', '/api/v1/simulations/scenarios', dev.key, { name, caller: { lines: lines.map((say) => ({ say })) }, expectations: [{ kind: 'ended', by: 'caller' }] })).body.id
  // A one-word line ("Hello?") is sometimes not heard at all on a fresh process (the agent ends
  // the call for silence): an open bug of its own, not what this test is about.
  const short = await scenario('short', ['Hello, are you open today?'])
  const long = await scenario('long', ['What time do you open on Saturday?', 'Where do customers park?', 'Do you sell gift cards?', 'Thank you.'])
  const suite = (await call('POST', '/api/v1/simulations/suites', dev.key, { name: 'Crash', agent, scenarios: [short, long] })).body.id
  const started = await call('POST', `/api/v1/simulations/suites/${suite}/runs`, dev.key, { target: 'draft' })
  expect(started.status).toBe(202)
  const runId = started.body.id
  // The crash point kills the service once the short call's result is written.
  await until(
    'the service killed itself',
    () => child!.exitCode !== null || child!.signalCode !== null,
    (dead) => dead,
    { withinMs: 90_000, everyMs: 100 },
  )

  child = await startChildService(port, env)
  const done = await until(
    'the run finished after the restart',
    () => call('GET', `/api/v1/simulations/runs/${runId}`, dev.key),
    (r) => r.body?.status === 'done',
    { withinMs: 120_000, everyMs: 250 },
  )
  expect(done.body).toMatchObject({ status: 'done', passed: true, totals: { calls: 2, finished: 2, passed: 2, failed: 0 } })
  const [first, second] = done.body.results
  // Judged before the kill, not played again. Its caller's words are checked as heard: the line may
  // be cut in two and its tail, said over the agent's answer, let go as overlap (the open false
  // cut-off problem, bench:turn-taking), so what was heard is a beginning of the line.
  expect(first.transcript[0].text).toBe('Hello from Bean There!')
  const said = first.transcript
    .filter((l: any) => l.speaker === 'customer')
    .map((l: any) => l.text)
    .join(' ')
  expect(said.length).toBeGreaterThan(0)
  expect('Hello, are you open today?'.startsWith(said)).toBe(true)
  expect(first.transcript.at(-1).speaker).toBe('agent')
  // The long caller's whole script was heard, on the call placed after the restart (a loaded
  // machine may hear a pause inside a line as two turns: the words are what count here).
  const heard = second.transcript.filter((l: any) => l.speaker === 'customer').map((l: any) => l.text)
  expect(heard.join(' ')).toBe('What time do you open on Saturday? Where do customers park? Do you sell gift cards? Thank you.')
  const rows = await call('GET', `/api/v1/calls/${second.call.id}`, dev.key)
  expect(rows.body.status).toBe('completed')
  child.kill('SIGKILL')
  await child.exited
  // One simulation.finished for the run, recorded once (the store, read after the service is gone).
  const { Database } = await import('bun:sqlite')
  const db = new Database(join(dataDir, 'service.db'), { readonly: true })
  const finished = db.query("SELECT doc FROM events WHERE json_extract(doc, '$.type') = 'simulation.finished'").all() as { doc: string }[]
  db.close()
  expect(finished.map((r) => JSON.parse(r.doc).data.id)).toEqual([runId])
}, 240_000)
