/**
 * bench:cluster — two instances of the service (`bun src/index.ts`, each its own process and port)
 * on one Redis and one store (the embedded SQLite in shared locking, standing in for MongoDB), as
 * two containers behind a load balancer run. BENCH_CALLS (200) calls are placed through the API,
 * alternately on A and on B, at BENCH_RATE (20) a second; every call's media crosses over: the
 * sandbox network of the instance that placed it answers, and its callee streams into the other
 * instance (SANDBOX_MEDIA_URL), where the voice pipeline runs (sandbox speech engines, energy VAD).
 * Each callee waits for the agent's opening, asks one question, hears the answer and hangs up.
 *
 *   bun bench/cluster.ts          (BENCH_CALLS=50 for a quicker run)
 *
 * Printed: the POST latency each instance gave, how long until every call was ended and analysed,
 * how many streams ran on the other instance (read from the console's actor view while each call
 * was live), the turns each call had, the agent's answer latency, each process's CPU; then, read
 * from the shared store once both have stopped, how many tries have exactly one call.completed and
 * one call.analysed (must be all of them). Needs redis-server on PATH (or $REDIS_SERVER).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../src/store'
import { startRedis } from '../test/support/redis'
import { cpuMs } from './service'

const CALLS = Number(process.env.BENCH_CALLS ?? 200)
const RATE = Number(process.env.BENCH_RATE ?? 20)
// How long the calls may take to end and be analysed after the last POST before the run fails.
const SETTLE_MS = 120_000
const TOKEN = 'bench-cluster-console-token-0123456789'
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN
const numberOf = (i: number) => `+1415${String(3_000_000 + i).padStart(7, '0')}`
const ms = (x: number) => `${x.toFixed(1)} ms`

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

const redis = await startRedis()
const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-'))
const ports = { a: await freePort(), b: await freePort() }
const base = (name: 'a' | 'b') => `http://127.0.0.1:${ports[name]}`
const procs: ReturnType<typeof Bun.spawn>[] = []
for (const name of ['a', 'b'] as const) {
  const other = name === 'a' ? 'b' : 'a'
  procs.push(
    Bun.spawn([process.execPath, join(import.meta.dir, '..', 'src/index.ts')], {
      env: {
        ...process.env,
        PORT: String(ports[name]),
        HOST: '127.0.0.1',
        DATA_DIR: dir,
        REDIS_URL: redis.url,
        SQLITE_LOCKING: 'shared',
        CONSOLE_TOKEN: TOKEN,
        SECRET_KEY: 'bench-cluster-secret-key-0123456789abcdef',
        SANDBOX_MEDIA_URL: base(other),
        STT_PROVIDER: 'sandbox',
        TTS_PROVIDER: 'sandbox',
        VAD: 'energy',
        LOG_LEVEL: 'silent',
      },
      stdout: 'ignore',
      stderr: 'inherit',
    }),
  )
  // One after the other: the first makes the store's tables, the second finds them.
  for (
    let i = 0;
    i < 400 &&
    !(await fetch(`${base(name)}/health`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  )
    await Bun.sleep(25)
}
const [procA, procB] = procs as [ReturnType<typeof Bun.spawn>, ReturnType<typeof Bun.spawn>]

const request = async (name: 'a' | 'b', method: string, path: string, auth: string, body?: unknown) => {
  const res = await fetch(base(name) + path, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: (await res.json().catch(() => null)) as any }
}

try {
  const dev = (await request('a', 'POST', '/console/workspaces', TOKEN, { name: 'Bench cluster', plan: 'enterprise' })).body
  const agent = (await request('a', 'POST', '/api/v1/agents', dev.key, { name: 'Bench caller', voice: { answersCalls: true } })).body.id
  if ((await request('a', 'POST', `/agents/${agent}/publish`, dev.key, {})).status !== 200) throw new Error('could not publish the agent')
  await request('a', 'POST', `/console/workspaces/${dev.id}/phone-numbers`, TOKEN, { number: '+14155550100', source: 'rented', agent })
  // Set up through both instances: one store.
  for (let i = 0; i < CALLS; i++) {
    const on = i % 2 ? 'b' : 'a'
    await request(on, 'POST', `/console/workspaces/${dev.id}/contacts`, TOKEN, { phone: numberOf(i) })
    await request(on, 'PUT', `/console/sandbox/phones/${encodeURIComponent(numberOf(i))}`, TOKEN, { pickup: 'answer', ringMs: 0, lines: ['When are you open?'], hangupAfterMs: 15_000 })
  }

  const cpu = { a: cpuMs(procA.pid), b: cpuMs(procB.pid) }
  const latencies = { a: [] as number[], b: [] as number[] }
  const placed: { id: string; on: 'a' | 'b' }[] = []
  let refused = 0
  let crossed = 0
  let seenLive = 0
  const watching: Promise<void>[] = []
  // While a call is live, where does its stream run? The console's actor view shows the pipeline
  // on the instance that holds it.
  const watch = async (id: string, on: 'a' | 'b') => {
    const other = on === 'a' ? 'b' : 'a'
    for (let i = 0; i < 100; i++) {
      const there = (await request(other, 'GET', `/console/actors/call:${id}`, TOKEN)).body
      if (there?.pipeline) {
        seenLive++
        const here = (await request(on, 'GET', `/console/actors/call:${id}`, TOKEN)).body
        if (!here?.pipeline) crossed++
        return
      }
      if (['completed', 'missed', 'failed', 'cancelled'].includes(there?.state)) return
      await Bun.sleep(100)
    }
  }
  const started = performance.now()
  const inFlight: Promise<void>[] = []
  for (let k = 0; k < CALLS; k++) {
    const due = started + (k * 1000) / RATE
    const wait = due - performance.now()
    if (wait > 0.5) await Bun.sleep(wait)
    const on = k % 2 ? 'b' : 'a'
    inFlight.push(
      (async () => {
        const t0 = performance.now()
        const r = await request(on, 'POST', '/api/v1/calls', dev.key, { to: numberOf(k), purpose: 'Hello, this is the bench calling.' })
        latencies[on].push(performance.now() - t0)
        if (r.status !== 202) return void refused++
        placed.push({ id: r.body.id, on })
        watching.push(watch(r.body.id, on))
      })(),
    )
  }
  await Promise.all(inFlight)
  const placingS = (performance.now() - started) / 1000

  // Every call ended and analysed, read on the instance that did not place it.
  const deadline = Date.now() + SETTLE_MS
  let rows: any[] = []
  for (;;) {
    rows = await Promise.all(placed.map(async (p) => (await request(p.on === 'a' ? 'b' : 'a', 'GET', `/api/v1/calls/${p.id}`, dev.key)).body))
    if (rows.every((c) => c.analysedAt) || Date.now() > deadline) break
    await Bun.sleep(1_000)
  }
  const allDoneS = (performance.now() - started) / 1000
  await Promise.all(watching)
  const cpuUsed = { a: cpuMs(procA.pid) - cpu.a, b: cpuMs(procB.pid) - cpu.b }
  const analysed = rows.filter((c) => c.analysedAt).length
  const talked = rows.filter((c) => c.transcript?.length >= 3 && c.transcript[1]?.text === 'When are you open?').length
  const statuses = new Map<string, number>()
  for (const c of rows) statuses.set(`${c.status}/${c.hangup}`, (statuses.get(`${c.status}/${c.hangup}`) ?? 0) + 1)
  const firstAudio = rows
    .map((c) => c.latency?.toFirstAudioMs?.p50)
    .filter((x) => typeof x === 'number')
    .sort((x, y) => x - y)

  // Both stop; then the shared store's event log: one call.completed and one call.analysed per try.
  for (const p of procs) p.kill('SIGTERM')
  await Promise.all(procs.map((p) => p.exited))
  const store = await openStore({ dataDir: dir, sqliteLocking: 'shared' })
  const count = new Map<string, number>()
  for (const e of await (await store.collection<any>({ name: 'events', indexes: [] })).find({ workspaceId: dev.id, type: { $in: ['call.completed', 'call.analysed'] } })) {
    const k = `${e.type}:${e.data.id}#${e.data.attempt ?? 1}`
    count.set(k, (count.get(k) ?? 0) + 1)
  }
  await store.close()
  const once = placed.filter((p) => count.get(`call.completed:${p.id}#1`) === 1 && count.get(`call.analysed:${p.id}#1`) === 1).length

  for (const name of ['a', 'b'] as const) latencies[name].sort((x, y) => x - y)
  console.log(`bench:cluster — two instances (own processes) on one Redis and one SQLite store (shared locking), sandbox network and speech engines, energy VAD, system clock, loopback`)
  console.log(`  ${CALLS} calls offered at ${RATE}/s, alternately on A and B: ${placed.length} accepted in ${placingS.toFixed(1)} s, ${refused} refused`)
  for (const name of ['a', 'b'] as const) {
    const l = latencies[name]
    console.log(
      `  POST /api/v1/calls on ${name.toUpperCase()}: ${l.length} calls, p50 ${ms(percentile(l, 50))}, p99 ${ms(percentile(l, 99))}, max ${ms(l[l.length - 1] ?? NaN)}; process CPU ${(cpuUsed[name] / 1000).toFixed(1)} s`,
    )
  }
  console.log(`  media: ${crossed}/${seenLive} streams seen live ran on the instance that did not place the call`)
  console.log(`  ended and analysed: ${analysed}/${placed.length}, all ${allDoneS.toFixed(1)} s after the first POST; outcomes ${[...statuses].map(([k, v]) => `${k} ${v}`).join(', ')}`)
  console.log(
    `  conversations: ${talked}/${placed.length} had the agent's opening, the callee's question and the agent's answer${firstAudio.length ? `; first agent audio after the callee's question, median of the calls' p50 ${ms(percentile(firstAudio, 50))}` : ''}`,
  )
  console.log(`  exactly one call.completed and one call.analysed per call (the shared event log): ${once}/${placed.length} — ${once === CALLS ? 'all' : 'NOT ALL'}`)
  if (once !== CALLS || crossed !== seenLive) process.exitCode = 1
} finally {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
  await redis.stop()
  rmSync(dir, { recursive: true, force: true })
}
