/**
 * A second instance started on a PORT another one holds stops at boot naming the port (exit 2),
 * instead of sharing it (SO_REUSEPORT, Bun's default) and answering every other request with its
 * own data. REUSE_PORT=1 on both shares it on purpose. Real services as child processes.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { loadConfig } from '../../src/config'
import { freePort, startChildService } from '../support/child-service'

const ROOT = join(import.meta.dir, '..', '..')
const procs: Subprocess[] = []
const dirs: string[] = []

afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

// A boot is ~0.5 s here; a second one that has not ended or served within 30 s is not coming.
const BOOT_TIMEOUT_MS = 30_000

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'port-taken-'))
  dirs.push(dir)
  return dir
}

/** Starts a service on `port`; answers its exit code and stderr, or 'listening' once it printed that it listens. */
async function boot(port: number, env: Record<string, string>): Promise<{ code: number | 'listening'; err: string }> {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/index.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir(), LOG_LEVEL: 'silent', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  procs.push(proc)
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let out = ''
  const deadline = Date.now() + BOOT_TIMEOUT_MS
  while (!out.includes('agent platform listening') && Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
    if (!chunk || chunk.done) break
    out += decoder.decode(chunk.value)
  }
  reader.releaseLock()
  if (out.includes('agent platform listening')) return { code: 'listening', err: '' }
  return { code: await proc.exited, err: await new Response(proc.stderr).text() }
}

test('REUSE_PORT is a flag, off by default', () => {
  expect(loadConfig({}).reusePort).toBe(false)
  expect(loadConfig({ REUSE_PORT: '1' }).reusePort).toBe(true)
  expect(() => loadConfig({ REUSE_PORT: 'maybe' })).toThrow('REUSE_PORT: must be true or false')
})

test('a second instance on a taken PORT stops naming the port, and the first keeps every request', async () => {
  const port = await freePort()
  const first = await startChildService(port, { DATA_DIR: dataDir(), LOG_LEVEL: 'silent' })
  procs.push(first)
  const { code, err } = await boot(port, {})
  expect(code).toBe(2)
  expect(err).toContain(`configuration error: PORT: ${port} is taken on 127.0.0.1`)
  expect(err).toContain('REUSE_PORT=1')
  expect(first.exitCode).toBeNull()
  expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
}, 60_000)

test('REUSE_PORT=1 on both lets a second instance listen on the same PORT', async () => {
  const port = await freePort()
  const first = await startChildService(port, { DATA_DIR: dataDir(), LOG_LEVEL: 'silent', REUSE_PORT: '1' })
  procs.push(first)
  expect((await boot(port, { REUSE_PORT: '1' })).code).toBe('listening')
}, 60_000)
