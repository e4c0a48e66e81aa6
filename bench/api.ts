/**
 * bench:api — how much of a bare Bun server's throughput survives our request path.
 *
 * One run: start the real service (`bun src/index.ts`, embedded SQLite store, local coordination)
 * and a bare `Bun.serve` (bench/bare-server.ts) in child processes on loopback, make a workspace
 * and an agent, then load GET /api/v1/agents/{id} (bearer auth, workspace resolution, store read)
 * and the bare server (same bytes, same content type) with the same autocannon settings, in
 * alternating rounds so machine noise lands on both. Prints per-round and median req/s, p99 and
 * the ratio ours/bare against the target. Children are killed at the end, also on error.
 */

import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'

const ROOT = resolve(import.meta.dir, '..')
const HOST = '127.0.0.1'
const TARGET = 0.6
// 2 shared cores: one for the server under load, one for the load generator.
const LOAD = { connections: 10, pipelining: 1, warmupSeconds: 3, roundSeconds: 10, rounds: 3 }

const children = new Set<Subprocess>()
let dataDir: string | undefined

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const probe = createServer()
    probe.once('error', fail)
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => ok(port))
    })
  })
}

/** A long-lived child; its stdout (boot banner with keys) is dropped, its stderr shows failures. */
function spawn(cmd: string[], env: Record<string, string>): Subprocess {
  const child = Bun.spawn(cmd, { cwd: ROOT, env, stdout: 'ignore', stderr: 'inherit' })
  children.add(child)
  child.exited.then(() => children.delete(child))
  return child
}

/** Kills every child we started (TERM, then KILL after 3 s) and removes the temp data dir. */
async function cleanUp(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      child.kill('SIGTERM')
      const done = await Promise.race([child.exited.then(() => true), Bun.sleep(3000).then(() => false)])
      if (!done) child.kill('SIGKILL')
    }),
  )
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
}

async function waitUntilUp(url: string, child: Subprocess, what: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} before answering`)
    try {
      if ((await fetch(url)).ok) return
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(100)
  }
  throw new Error(`${what} did not answer ${url} within 30 s`)
}

async function call(method: string, url: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${text}`)
  return JSON.parse(text)
}

interface Round {
  rps: number
  p99: number
  requests: number
}

/** One autocannon run in its own Node process (its CLI with --json), so it never shares our event loop. */
async function load(url: string, key: string | null, seconds: number): Promise<Round> {
  const args = ['node', join(ROOT, 'node_modules/autocannon/autocannon.js'), '--json', '-n']
  args.push('-c', String(LOAD.connections), '-p', String(LOAD.pipelining), '-d', String(seconds))
  if (key) args.push('-H', `authorization=Bearer ${key}`)
  args.push(url)
  const child = Bun.spawn(args, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  children.add(child)
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  children.delete(child)
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${err}`)
  const result = JSON.parse(out.trim().split('\n').pop()!)
  // A throughput of 401s, 429s or errors measures the wrong thing: refuse to report it.
  if (result.non2xx || result.errors || result.timeouts) {
    throw new Error(`load on ${url} got non2xx=${result.non2xx} errors=${result.errors} timeouts=${result.timeouts}`)
  }
  return { rps: result.requests.average, p99: result.latency.p99, requests: result.requests.total }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
/** autocannon's latency histogram counts whole milliseconds, so 0 means "under 1 ms". */
const ms = (n: number): string => (n < 1 ? '<1 ms' : `${fmt(n)} ms`)

async function main(): Promise<void> {
  dataDir = mkdtempSync(join(tmpdir(), 'bench-api-'))
  try {
    const consoleToken = randomBytes(24).toString('hex')
    const [ourPort, barePort] = [await freePort(), await freePort()]
    const env = { ...process.env } as Record<string, string>
    // The embedded defaults are what we measure: never a Mongo or Redis from the caller's shell.
    delete env.MONGODB_URL
    delete env.REDIS_URL
    const ours = spawn([process.execPath, 'src/index.ts'], {
      ...env,
      PORT: String(ourPort),
      HOST,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      CONSOLE_TOKEN: consoleToken,
      SERVICE_CLOCK: 'system',
    })
    const base = `http://${HOST}:${ourPort}`
    await waitUntilUp(`${base}/health`, ours, 'the service')

    const ws = await call('POST', `${base}/console/workspaces`, consoleToken, { name: 'Bench' })
    const agent = await call('POST', `${base}/api/v1/agents`, ws.key, { name: 'Bench agent' })
    const ourUrl = `${base}/api/v1/agents/${agent.id}`
    const sample = await fetch(ourUrl, { headers: { authorization: `Bearer ${ws.key}` } })
    if (sample.status !== 200) throw new Error(`GET ${ourUrl} answered ${sample.status}`)
    const contentType = sample.headers.get('content-type') ?? 'application/json'
    const bytes = new Uint8Array(await sample.arrayBuffer())
    const bodyFile = join(dataDir, 'bare-body.json')
    writeFileSync(bodyFile, bytes)

    const bare = spawn([process.execPath, 'bench/bare-server.ts'], { ...env, PORT: String(barePort), HOST, BODY_FILE: bodyFile, CONTENT_TYPE: contentType })
    const bareUrl = `http://${HOST}:${barePort}/api/v1/agents/${agent.id}`
    await waitUntilUp(bareUrl, bare, 'the bare server')
    const bareSample = await fetch(bareUrl)
    const bareBytes = new Uint8Array(await bareSample.arrayBuffer())
    if (Buffer.compare(bareBytes, bytes) !== 0 || bareSample.headers.get('content-type') !== contentType) {
      throw new Error('the bare server does not answer the same bytes and content type')
    }

    console.log(`bench:api — GET /api/v1/agents/{id} (${bytes.length} bytes, ${contentType})`)
    console.log(`  ours: bun src/index.ts, embedded SQLite store + local coordination, LOG_LEVEL=warn`)
    console.log(`  bare: Bun.serve returning the same bytes and content type`)
    console.log(`  per-request info logs are off for both sides (ours at warn; the bare server logs nothing)`)
    console.log(
      `  load: autocannon (Node process), ${LOAD.connections} connections, pipelining ${LOAD.pipelining}, ${LOAD.rounds} rounds × ${LOAD.roundSeconds} s each, alternating, after ${LOAD.warmupSeconds} s warm-up each`,
    )
    console.log(`  machine: loopback only, ${navigator.hardwareConcurrency} cores, shared; p99 is in whole ms (autocannon's resolution)`)

    await load(ourUrl, ws.key, LOAD.warmupSeconds)
    await load(bareUrl, null, LOAD.warmupSeconds)

    const oursRounds: Round[] = []
    const bareRounds: Round[] = []
    for (let i = 1; i <= LOAD.rounds; i++) {
      const a = await load(ourUrl, ws.key, LOAD.roundSeconds)
      oursRounds.push(a)
      console.log(`  round ${i} ours: ${fmt(a.rps).padStart(7)} req/s  p99 ${ms(a.p99).padStart(6)}  (${fmt(a.requests)} requests)`)
      const b = await load(bareUrl, null, LOAD.roundSeconds)
      bareRounds.push(b)
      console.log(`  round ${i} bare: ${fmt(b.rps).padStart(7)} req/s  p99 ${ms(b.p99).padStart(6)}  (${fmt(b.requests)} requests)`)
    }

    const oursRps = median(oursRounds.map((r) => r.rps))
    const bareRps = median(bareRounds.map((r) => r.rps))
    const ratio = oursRps / bareRps
    console.log(`median ours: ${fmt(oursRps)} req/s, p99 ${ms(median(oursRounds.map((r) => r.p99)))}`)
    console.log(`median bare: ${fmt(bareRps)} req/s, p99 ${ms(median(bareRounds.map((r) => r.p99)))}`)
    console.log(`ratio ours/bare: ${ratio.toFixed(2)} (target ≥ ${TARGET}) — ${ratio >= TARGET ? 'meets target' : 'BELOW TARGET'}`)
  } finally {
    await cleanUp()
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    cleanUp().finally(() => process.exit(130))
  })
}

try {
  await main()
} catch (error) {
  console.error(`bench:api failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
}
