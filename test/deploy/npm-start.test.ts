/**
 * `npm start`, the documented start command, under a supervisor: SIGTERM to the npm process drains
 * the service and ends it (npm exits with its code), and Ctrl-C (SIGINT to the whole process
 * group, as a terminal sends it) drains once, not as the "second signal" that cuts calls short.
 * Runs the real npm on PATH, as a new user would, in its own process group so cleanup can reach
 * whatever it started.
 */
import { afterAll, expect, test } from 'bun:test'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/child-service'

const ROOT = join(import.meta.dir, '..', '..')
const groups: number[] = []
const dirs: string[] = []

afterAll(() => {
  // A service left running (the bug this guards against) is in the group npm led.
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {
      // the group is gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

// A boot through npm is ~1.5 s here; 30 s means it is not coming (a loaded CI runner included).
const BOOT_TIMEOUT_MS = 30_000
// The drain with nothing live ends in milliseconds; 15 s is only a ceiling for a loaded runner.
const EXIT_TIMEOUT_MS = 15_000

interface Started {
  child: ChildProcess
  port: number
  output(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

async function npmStart(): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'npm-start-'))
  dirs.push(dir)
  const port = await freePort()
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'info', DRAIN_SECONDS: '300' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  groups.push(child.pid!)
  let out = ''
  child.stdout!.on('data', (chunk) => (out += chunk))
  child.stderr!.on('data', (chunk) => (out += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  const deadline = Date.now() + BOOT_TIMEOUT_MS
  while (!(await health(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not serve /health:\n${out}`)
    await Bun.sleep(50)
  }
  return { child, port, output: () => out, exited }
}

async function health(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/health`).then(
    (r) => r.ok,
    () => false,
  )
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([promise, Bun.sleep(ms).then(() => 'timeout' as const)])
}

test('SIGTERM to npm drains the service, and npm exits 0 once it has stopped', async () => {
  const s = await npmStart()
  process.kill(s.child.pid!, 'SIGTERM')
  expect(await within(s.exited, EXIT_TIMEOUT_MS)).toEqual({ code: 0, signal: null })
  expect(s.output()).toContain('shutting down: draining')
  expect(s.output()).toContain('drained and stopped')
  // Nothing is left answering on the port.
  expect(await health(s.port)).toBe(false)
}, 60_000)

test('Ctrl-C (SIGINT to the group) drains once: npm forwarding its copy is not a second signal', async () => {
  const s = await npmStart()
  process.kill(-s.child.pid!, 'SIGINT')
  expect(await within(s.exited, EXIT_TIMEOUT_MS)).toEqual({ code: 0, signal: null })
  expect(s.output()).toContain('drained and stopped')
  expect(s.output()).not.toContain('second signal')
  expect(await health(s.port)).toBe(false)
}, 60_000)
