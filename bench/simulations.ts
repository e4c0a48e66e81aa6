/**
 * bench:simulations — a simulation run of 50 six-turn phone scenarios at once, as a developer runs
 * it: the service in its own process (bench/service.ts) on 127.0.0.1, the sandbox phone network,
 * the sandbox speech doubles on the agent's side (scripted STT, formant TTS: the deterministic
 * set-up of docs/api/simulations.md), Silero VAD on the callers' real audio (espeak-ng voices),
 * the `local` model answering from a pasted FAQ. One suite of BENCH_SCENARIOS (50) scenarios, each
 * a caller with six lines, run once (count 1) against the draft, in two modes:
 *
 *   bun bench/simulations.ts        SERVICE_CLOCK=system (real time), then SERVICE_CLOCK=manual
 *   BENCH_CLOCKS=manual BENCH_SCENARIOS=10 bun bench/simulations.ts     one mode, a smaller suite
 *
 * Prints per mode: the run's wall time (POST to done), the service's CPU per call (its process's
 * user + system time over the run / calls: the callers' side is in that process too), the turn
 * latency each caller lived (from the end of its line's speech to the echo of the first mark of the
 * agent's answer, i.e. the agent's audio playing at the caller: p50/p95/max over every turn), calls
 * passed, and the machine's load average; then each call that failed, with the expectations that
 * did not hold, their evidence and its transcript. On the system clock the audio is real time (a
 * caller speaks and listens at the pace of sound). On the manual clock a call runs on its caller's
 * audio (src/voice/stream-clock.ts): as fast as the host judges it, faster than real time on a host
 * with CPU to spare, slower on one without, the same calls either way; its turn latencies are then
 * in the call's audio time, not the host's. Bounded (RUN_LIMIT_MS), loopback only.
 */
import { Database } from 'bun:sqlite'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { cpuMs, startBenchService } from './service'
import { percentile } from './stats'

const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 50)
const LINES = ['What time do you open on Saturday?', 'Where do customers park?', 'Are you open on Sundays?', 'Is the parking free?', 'My name is Priya.', 'Thank you, goodbye.']
const FAQ = `Opening hours

We are open from 7 am to 7 pm Monday to Saturday and from 8 am to 2 pm on Sundays.

Parking

Free parking for customers is behind the shop, entrance on Mill Lane.`
/** Six turns take about a minute of real audio; 50 at once on a loaded 2-core host, several. Past this the run is failed. */
const RUN_LIMIT_MS = 10 * 60_000
/** 240 polls of 250 ms: a minute for the service to boot on a host loaded by others. */
const BOOT_POLLS = 240

if (!(Number.isInteger(SCENARIOS) && SCENARIOS >= 1 && SCENARIOS <= 50)) {
  console.error('bench:simulations: BENCH_SCENARIOS must be 1–50 (a suite holds at most 50)')
  process.exit(2)
}

async function mode(clock: 'system' | 'manual') {
  const { service, base, dir, token } = await startBenchService(`simulations-${clock}`, { SERVICE_CLOCK: clock, STT_PROVIDER: 'sandbox', TTS_PROVIDER: 'sandbox' })
  const call = async (method: string, path: string, auth: string, body?: unknown) => {
    const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const json = (await r.json().catch(() => null)) as any
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`)
    return json
  }
  try {
    // startBenchService gives a boot 10 s; a host this loaded (load average past 40) may need more.
    for (
      let i = 0;
      i < BOOT_POLLS &&
      !(await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    )
      await Bun.sleep(250)
    const dev = await call('POST', '/console/workspaces', token, { name: 'Bench simulations', plan: 'scale' })
    const agent = (await call('POST', '/api/v1/agents', dev.key, { name: 'Bean There', greeting: 'Hello from Bean There!', voice: { answersCalls: true }, collectFields: [{ name: 'name' }] })).id
    await call('POST', `/api/v1/agents/${agent}/knowledge`, dev.key, { text: FAQ, title: 'Shop FAQ' })
    const scenarios: string[] = []
    for (let i = 0; i < SCENARIOS; i++) {
      const s = await call('POST', '/api/v1/simulations/scenarios', dev.key, {
        name: `caller ${i + 1}`,
        caller: { lines: LINES.map((say) => ({ say })) },
        expectations: [
          { kind: 'field', name: 'name', equals: 'Priya' },
          { kind: 'says', text: 'Mill Lane' },
          { kind: 'ended', by: 'caller' },
        ],
      })
      scenarios.push(s.id)
    }
    const suite = (await call('POST', '/api/v1/simulations/suites', dev.key, { name: 'Bench', agent, scenarios })).id
    const cpu0 = cpuMs(service.pid)
    const t0 = performance.now()
    const run = (await call('POST', `/api/v1/simulations/suites/${suite}/runs`, dev.key, { target: 'draft' })).id
    let done: any = null
    while (performance.now() - t0 < RUN_LIMIT_MS) {
      done = await call('GET', `/api/v1/simulations/runs/${run}`, dev.key)
      if (done.status === 'done') break
      await Bun.sleep(500)
    }
    const wallMs = performance.now() - t0
    const cpu = cpuMs(service.pid) - cpu0
    if (done?.status !== 'done') throw new Error(`the run did not finish in ${RUN_LIMIT_MS / 1000} s: ${JSON.stringify(done?.totals)}`)
    const db = new Database(join(dir, 'service.db'), { readonly: true })
    const rows = db.query("SELECT doc FROM call_tries WHERE json_extract(doc, '$.simulation.runId') = ?").all(run) as { doc: string }[]
    db.close()
    const turns = rows.flatMap((r) => (JSON.parse(r.doc).latencyTurns ?? []) as { toFirstHeardMs: number | null; toFirstAudioMs: number | null }[])
    const heard = turns.map((t) => t.toFirstHeardMs).filter((v): v is number => v !== null)
    const sent = turns.map((t) => t.toFirstAudioMs).filter((v): v is number => v !== null)
    const ms = (v: number) => `${Math.round(v)} ms`
    console.log(`\n${clock} clock: ${SCENARIOS} six-turn calls at once`)
    console.log(`  wall time           ${(wallMs / 1000).toFixed(1)} s (POST to done)`)
    console.log(`  service CPU / call  ${ms(cpu / SCENARIOS)} (${(cpu / 1000).toFixed(1)} s in all, ${((cpu / wallMs) * 100).toFixed(0)}% of one core on average)`)
    console.log(`  turns lived         ${heard.length} (of ${SCENARIOS * LINES.length} caller lines)`)
    console.log(`  caller heard agent  p50 ${ms(percentile(heard, 50))}  p95 ${ms(percentile(heard, 95))}  max ${ms(Math.max(...heard))} after its line's speech ended`)
    console.log(`  first audio sent    p50 ${ms(percentile(sent, 50))}  p95 ${ms(percentile(sent, 95))}  max ${ms(Math.max(...sent))}`)
    console.log(
      `  calls passed        ${done.totals.passed} of ${done.totals.calls}; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    )
    // A failed call says why: its error, each expectation that did not hold with its evidence, its transcript.
    for (const r of (done.results ?? []) as any[]) {
      if (r.status === 'passed') continue
      console.log(`  ${r.name}: ${r.status}${r.error ? ` — ${r.error}` : ''}`)
      for (const e of r.expectations ?? []) if (!e.passed) console.log(`    ${e.kind} failed: ${JSON.stringify(e.evidence)}`)
      for (const l of r.transcript ?? []) console.log(`    ${l.speaker.padEnd(8)} ${l.text}`)
    }
  } finally {
    service.kill('SIGKILL')
    await service.exited
  }
}

console.log(
  `bench:simulations — load average at start ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
// BENCH_CLOCKS=manual (or system) runs one mode only.
const clocks = (process.env.BENCH_CLOCKS ?? 'system,manual').split(',').map((c) => c.trim())
if (!clocks.every((c) => c === 'system' || c === 'manual')) {
  console.error('bench:simulations: BENCH_CLOCKS is a comma-separated list of system and manual')
  process.exit(2)
}
for (const clock of clocks) await mode(clock as 'system' | 'manual')
