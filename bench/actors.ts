/**
 * bench:actors — the actor runtime at 100,000 actors on the embedded store.
 *
 *   bun bench/actors.ts            (BENCH_ACTORS=20000 for a quicker run)
 *
 * 1. spawn 100,000 persisted actors, each with a pending deadline (a durable timer), in a temp
 *    DATA_DIR, then passivate them all: heap per passivated actor (ideally 0).
 * 2. resume 10,000 of them (one event each): heap per live actor.
 * 3. boot a fresh process on that DATA_DIR (open store + coordination + runtime ready to serve):
 *    wall time from spawn to ready.
 * 4. advance the (manual) clock past every deadline and drain with runDue: timers fired per second.
 * Heap figures are JSC heap deltas after a full collection (Bun.gc(true)).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { assign, setup } from 'xstate'
import { ActorRuntime } from '../actors/runtime'
import { ManualClock } from '../src/clock'
import { openCoordination } from '../src/coordination'
import { openStore } from '../src/store'

const N = Number(process.env.BENCH_ACTORS ?? 100_000)
const LIVE = Math.min(10_000, N)
// In the future on purpose: the real service booted on this DATA_DIR (system time, manual clock)
// must find none of the bench's timers due, or its pump would claim them for a kind it does not run.
const T0 = Date.UTC(2036, 0, 1)
const HOUR = 3_600_000
// Spawns in flight at once: overlaps the awaits of store and timer writes without piling up
// promises; beyond ~64 nothing gets faster on an embedded (synchronous) SQLite.
const CONCURRENCY = 64
// The targets (README "Benchmarks").
const TARGET_PASSIVATED_BYTES = 5 * 1024
const TARGET_LIVE_BYTES = 50 * 1024
const TARGET_BOOT_MS = 3_000

/** A deadline-driven resource: waits for its deadline, then fires (final). */
const waiter = setup({
  types: {
    context: {} as { id: string; workspace: string; dueAt: number; pings: number; attempts: number; note: string | null },
    input: {} as { id: string; dueAt: number },
    events: {} as { type: 'timer.due'; at: number; name?: string } | { type: 'ping' },
  },
}).createMachine({
  id: 'waiter',
  context: ({ input }) => ({ id: input.id, workspace: 'org_bench', dueAt: input.dueAt, pings: 0, attempts: 0, note: null }),
  initial: 'waiting',
  states: {
    waiting: {
      description: 'Until its deadline.',
      on: {
        'timer.due': { guard: ({ context, event }) => event.at >= context.dueAt, target: 'fired' },
        ping: { actions: assign({ pings: ({ context }) => context.pings + 1 }) },
      },
    },
    fired: { type: 'final', description: 'Its deadline passed.' },
  },
})

async function open(dataDir: string, clock: ManualClock) {
  const store = await openStore({ dataDir })
  const coordination = await openCoordination({ dataDir })
  const runtime = new ActorRuntime({ store, coordination, clock, logger: pino({ level: 'warn' }), instanceId: `bench-${process.pid}` })
  runtime.register('waiter', {
    machine: waiter,
    version: 1,
    deadlines: (snap) => (snap.value === 'waiting' ? [{ name: 'due', at: snap.context.dueAt }] : []),
  })
  await runtime.start()
  return {
    runtime,
    async close() {
      await runtime.stop()
      await coordination.close()
      await store.close()
    },
  }
}

function heap(): number {
  Bun.gc(true)
  Bun.gc(true)
  return process.memoryUsage().heapUsed
}

async function inParallel(count: number, job: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await job(next++)
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

/** Child mode: the "fresh process boot" being timed. Prints one JSON line when ready to serve. */
async function bootChild(dataDir: string): Promise<void> {
  const t = performance.now()
  const env = await open(dataDir, new ManualClock(T0))
  const ready = performance.now()
  console.log(JSON.stringify({ sinceProcessStartMs: ready, openToReadyMs: ready - t, live: env.runtime.liveCount }))
  await env.close()
}

// The whole service must answer within the target; past 20 s something is wrong, stop waiting.
const SERVICE_BOOT_GIVE_UP_MS = 20_000

/**
 * "Restart to serving": the real service (`bun src/index.ts`) on the DATA_DIR that holds the
 * 100,000 actors and their timers, from spawn until GET /health answers 200. Manual clock, so the
 * timer pump does not start firing the bench's timers while we measure.
 */
async function bootService(dataDir: string): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  const root = join(import.meta.dir, '..')
  const t = performance.now()
  const child = Bun.spawn([process.execPath, join(root, 'src/index.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SERVICE_CLOCK: 'manual' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  try {
    while (performance.now() - t < SERVICE_BOOT_GIVE_UP_MS) {
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      )
      if (ok) return performance.now() - t
      await Bun.sleep(5)
    }
    return Number.POSITIVE_INFINITY
  } finally {
    child.kill('SIGTERM')
    await child.exited
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-actors-'))
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`
  try {
    const clock = new ManualClock(T0)
    let env = await open(dataDir, clock)
    const base = heap()

    let t = performance.now()
    await inParallel(N, (i) => env.runtime.spawn('waiter', `w${i}`, { id: `w${i}`, dueAt: T0 + HOUR + (i % 3_600) * 1000 }))
    const spawnS = (performance.now() - t) / 1000
    await env.runtime.passivateIdle(true)
    const passivated = heap()
    const perPassivated = Math.max(0, passivated - base) / N
    console.error(`spawned ${N} in ${spawnS.toFixed(1)} s; live now ${env.runtime.liveCount}`)

    await inParallel(LIVE, (i) => env.runtime.send('waiter', `w${i}`, { type: 'ping' }))
    const live = heap()
    const perLive = (live - passivated) / LIVE
    console.error(`resumed ${env.runtime.liveCount} live`)
    await env.runtime.passivateIdle(true)
    const after = heap()
    await env.close()

    t = performance.now()
    const child = Bun.spawn([process.execPath, import.meta.path, '--boot', dataDir], { stdout: 'pipe', stderr: 'inherit' })
    const line = await new Response(child.stdout).text()
    const bootWallMs = performance.now() - t // includes the child exiting; the child's own figure does not
    await child.exited
    const boot = JSON.parse(line.trim().split('\n').at(-1)!) as { sinceProcessStartMs: number; openToReadyMs: number; live: number }

    const serviceBootMs = await bootService(dataDir)

    env = await open(dataDir, clock)
    t = performance.now()
    const fired = await env.runtime.runDue(clock.advance(3 * HOUR))
    const fireS = (performance.now() - t) / 1000
    const firedStored = (await env.runtime.list('waiter', { state: 'fired' })).length
    await env.close()

    const rows: [string, string, string, boolean][] = [
      ['actors persisted (with a pending timer)', String(N), '', true],
      ['spawn + persist rate', `${Math.round(N / spawnS)} /s`, '', true],
      ['heap per passivated actor', kb(perPassivated), `≤ ${kb(TARGET_PASSIVATED_BYTES)}`, perPassivated <= TARGET_PASSIVATED_BYTES],
      [`heap per live actor (${LIVE} live)`, kb(perLive), `≤ ${kb(TARGET_LIVE_BYTES)}`, perLive <= TARGET_LIVE_BYTES],
      ['heap after passivating them again', `${kb(Math.max(0, after - passivated))} above`, '', true],
      [`boot to ready, process start → ready (${N} persisted)`, `${Math.round(boot.sinceProcessStartMs)} ms`, `≤ ${TARGET_BOOT_MS} ms`, boot.sinceProcessStartMs <= TARGET_BOOT_MS],
      ['  of which open store + coordination + runtime', `${Math.round(boot.openToReadyMs)} ms`, '', true],
      ['  actors resumed at boot (pending work)', String(boot.live), '', true],
      ['  parent-measured spawn → child exit', `${Math.round(bootWallMs)} ms`, '', true],
      [`the service (bun src/index.ts) on that DATA_DIR: spawn → GET /health 200`, `${Math.round(serviceBootMs)} ms`, `≤ ${TARGET_BOOT_MS} ms`, serviceBootMs <= TARGET_BOOT_MS],
      ['timers fired through runDue', `${fired} (${firedStored} stored fired)`, `${N}`, fired === N && firedStored === N],
      ['timer firing throughput', `${Math.round(fired / fireS)} /s`, '', true],
    ]
    const w0 = Math.max(...rows.map((r) => r[0].length))
    const w1 = Math.max(...rows.map((r) => r[1].length))
    const w2 = Math.max(...rows.map((r) => r[2].length))
    console.log(`\nbench:actors  (${N} actors, embedded store, ${navigator.hardwareConcurrency} cores)\n`)
    for (const [name, value, target, ok] of rows) {
      console.log(`${name.padEnd(w0)}  ${value.padStart(w1)}  ${target.padEnd(w2)}  ${target ? (ok ? 'ok' : 'MISSED') : ''}`)
    }
    if (rows.some((r) => r[2] && !r[3])) process.exitCode = 1
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--boot') await bootChild(process.argv[3]!)
else await main()
