/**
 * The service for the benches that load it over HTTP: `bun src/index.ts` as deployed, in its own
 * process (so the load generator does not share its event loop; the two still share the machine's
 * 2 cores), on a free loopback port, with a fresh embedded store, answering `/health` before this
 * resolves. It names itself by that loopback address (PUBLIC_BASE_URL, unless `env` says otherwise), so
 * the Media Streams URL its TwiML gives is the one a client dials and signs. BENCH_PROFILE=<dir>
 * writes its CPU profile there as Markdown.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// A boot is well under a second here; 400 polls of 25 ms (10 s) means it is not coming.
const HEALTH_POLLS = 400
const HEALTH_POLL_MS = 25

/**
 * `dir`: an existing data dir to start on (a restart); `profile`: false to leave BENCH_PROFILE off for
 * this process (a bench that profiles only its measured phase restarts the service for it).
 */
export async function startBenchService(name: string, env: Record<string, string> = {}, options: { dir?: string; profile?: boolean } = {}) {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), `bench-${name}-`))
  const token = `bench-${name}-console-token-0123456789`
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  const profile = process.env.BENCH_PROFILE && options.profile !== false ? ['--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
  const base = `http://127.0.0.1:${port}`
  const service = Bun.spawn([process.execPath, ...profile, join(import.meta.dir, '..', 'src/index.ts')], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, DATA_DIR: dir, LOG_LEVEL: 'silent', CONSOLE_TOKEN: token, ...env },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  for (
    let i = 0;
    i < HEALTH_POLLS &&
    !(await fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  )
    await Bun.sleep(HEALTH_POLL_MS)
  return { service, base, dir, token }
}

/**
 * A process's CPU time (user + system) in ms, from /proc (Linux): what work costs whatever else the
 * machine runs. `mainThread`: only its main thread's — the event loop, which every request and
 * every actor shares, so what bounds latency (the JIT, GC helpers and the checkpointer run beside it).
 */
export const cpuMs = (pid: number, mainThread = false) => {
  const fields = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    .split(') ')[1]!
    .split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // utime, stime in clock ticks (USER_HZ = 100 on Linux)
}

/** What each of the service's threads is, by the name it runs under (its workers are named where they are made). */
const ROLES: [RegExp, string][] = [
  [/^stt-decoder$/, 'speech decoders'],
  [/^silero-vad$/, 'Silero'],
  [/^espeak-synth$/, 'espeak-ng'],
  [/^JITWorker$/, 'JIT'],
  [/^(HeapHelper|mi-scavenger|.*[Cc]ollector.*)$/, 'GC and allocator'],
]

/**
 * The process's CPU time (ms) by thread role, from /proc/<pid>/task: the main thread is the event
 * loop; the others by name (ROLES), the rest as `other`. A thread that ended since an earlier
 * reading takes its time with it, so read it where threads live on (the pools keep theirs).
 */
export function cpuByRole(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    let comm: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
    } catch {
      continue
    }
    const fields = stat.split(') ')[1]!.split(' ')
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
    const role = tid === String(pid) ? 'event loop' : (ROLES.find(([re]) => re.test(comm))?.[1] ?? 'other')
    out.set(role, (out.get(role) ?? 0) + ms)
  }
  return out
}
