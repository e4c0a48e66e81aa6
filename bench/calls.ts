/**
 * bench:calls — 1,000 calls placed through the API against the sandbox phone network (instant
 * pickup, a callee who hangs up at once), on the real server over loopback.
 *
 *   bun bench/calls.ts            (BENCH_CALLS=200 for a quicker run)
 *
 * Prints calls/s accepted (202s over the whole placing phase), p50/p99 POST latency, and how many
 * calls reached an ended state with exactly one call.analysed per try (must be all of them), read
 * from the service's event log once it has stopped.
 * Targets (issue 10): ≥ 500 calls/s accepted, POST p99 ≤ 20 ms, on this 2-core machine.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../src/store'

const CALLS = Number(process.env.BENCH_CALLS ?? 1_000)
// POSTs in flight at once: a busy API client; the enterprise plan's 1,000 lines and 6,000 calls a
// minute leave room for all of them.
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
// How long the calls may take to end and be analysed after the last POST before the run fails.
const SETTLE_MS = 60_000
const TARGET_RATE = 500
const TARGET_P99_MS = 20

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
const numberOf = (i: number) => `+1415${String(2_000_000 + i).padStart(7, '0')}`

// The service runs as its own process (`bun src/index.ts`, as deployed), so the load generator here
// does not share its event loop; the two still share the machine's 2 cores.
const dir = mkdtempSync(join(tmpdir(), 'bench-calls-'))
const TOKEN = 'bench-calls-console-token-0123456789'
const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
const port = probe.port!
probe.stop(true)
const service = Bun.spawn([process.execPath, ...(process.env.BENCH_PROFILE ? ['--cpu-prof-md', '--cpu-prof-dir=' + process.env.BENCH_PROFILE] : []), join(import.meta.dir, '..', 'src/index.ts')], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent', CONSOLE_TOKEN: TOKEN },
  stdout: 'ignore',
  stderr: 'inherit',
})
const base = `http://127.0.0.1:${port}`
for (let i = 0; i < 400 && !(await fetch(`${base}/health`).then((r) => r.ok, () => false)); i++) await Bun.sleep(25)
const request = async (method: string, path: string, auth: string, body?: unknown) => {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: (await res.json().catch(() => null)) as any }
}
try {
  const token = TOKEN
  const dev = (await request('POST', '/console/workspaces', token, { name: 'Bench calls', plan: 'enterprise' })).body
  const agent = (await request('POST', '/api/v1/agents', dev.key, { name: 'Bench caller', voice: { answersCalls: true } })).body.id
  await request('POST', `/console/workspaces/${dev.id}/phone-numbers`, token, { number: '+14155550100', source: 'rented', agent })

  for (let i = 0; i < CALLS; i++) {
    await request('POST', `/console/workspaces/${dev.id}/contacts`, token, { phone: numberOf(i) })
    await request('PUT', `/console/sandbox/phones/${encodeURIComponent(numberOf(i))}`, token, { pickup: 'answer', ringMs: 0, hangupAfterMs: 0 })
  }

  const latencies: number[] = []
  const ids: string[] = []
  let refused = 0
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        const i = next++
        const t0 = performance.now()
        const r = await request('POST', '/api/v1/calls', dev.key, { to: numberOf(i), purpose: `Bench call ${i}` })
        latencies.push(performance.now() - t0)
        if (r.status === 202) ids.push(r.body.id)
        else refused++
      }
    }),
  )
  const placingS = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)

  const deadline = Date.now() + SETTLE_MS
  let ended = 0
  for (;;) {
    ended = 0
    for (let page = (await request('GET', '/api/v1/calls?limit=100', dev.key)).body; ; ) {
      ended += page.items.filter((c: any) => ['completed', 'missed', 'failed', 'cancelled'].includes(c.status) && c.analysedAt).length
      if (!page.nextCursor) break
      page = (await request('GET', `/api/v1/calls?limit=100&cursor=${page.nextCursor}`, dev.key)).body
    }
    if (ended >= ids.length || Date.now() > deadline) break
    await Bun.sleep(200)
  }
  await Bun.sleep(500)
  // The service stops, then its store is read here: every call.analysed it recorded, per try.
  service.kill('SIGTERM')
  await service.exited
  const store = await openStore({ dataDir: dir, sqliteLocking: 'shared' })
  const perTry = new Map<string, number>()
  for (const e of await (await store.collection<any>({ name: 'events', indexes: [] })).find({ type: 'call.analysed', workspaceId: dev.id })) {
    const k = `${e.data.id}#${e.data.attempt}`
    perTry.set(k, (perTry.get(k) ?? 0) + 1)
  }
  await store.close()
  const onceAnalysed = ids.filter((id) => perTry.get(`${id}#1`) === 1).length

  const rate = ids.length / placingS
  const p50 = percentile(latencies, 50)
  const p99 = percentile(latencies, 99)
  console.log(`bench:calls — ${CALLS} calls through POST /api/v1/calls, sandbox network (instant pickup, callee hangs up at once)`)
  console.log(`  load: ${CONCURRENCY} POSTs in flight over loopback, embedded store, local coordination, system clock`)
  console.log(`  accepted: ${ids.length} (202), refused: ${refused}, placing took ${placingS.toFixed(2)} s`)
  console.log(`  calls/s accepted: ${rate.toFixed(0)} (target ≥ ${TARGET_RATE}) — ${rate >= TARGET_RATE ? 'meets target' : 'BELOW TARGET'}`)
  console.log(`  POST latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (target ≤ ${TARGET_P99_MS} ms) — ${p99 <= TARGET_P99_MS ? 'meets target' : 'ABOVE TARGET'}`)
  console.log(`  ended and analysed: ${ended}/${ids.length}; exactly one call.analysed per try: ${onceAnalysed}/${ids.length} — ${onceAnalysed === CALLS ? 'all' : 'NOT ALL'}`)
} finally {
  if (service.exitCode === null && service.signalCode === null) service.kill('SIGTERM')
  await service.exited
  rmSync(dir, { recursive: true, force: true })
}
