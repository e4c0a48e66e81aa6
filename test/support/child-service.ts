/**
 * The real service as a child process (`bun src/index.ts`), for the crash tests that kill it with
 * SIGKILL and start it again on the same DATA_DIR: a free loopback port, and a start that waits
 * for `/health`.
 */
import { join } from 'node:path'
import type { Subprocess } from 'bun'

const ROOT = join(import.meta.dir, '..', '..')
// A boot is ~0.3 s here; 400 polls of 25 ms (10 s) means it is not coming.
const READY_POLLS = 400
const READY_POLL_MS = 25

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

/**
 * Tests run on a shared, loaded host: admission control's timing signals (event-loop lag, the
 * audio's lead) would refuse calls there for reasons no test is about. Tests of admission set them.
 */
export const LENIENT_ADMISSION = { CALLS_MAX_LOOP_LAG_MS: '10000', CALLS_MIN_PLAYOUT_LEAD_MS: '0' }

/** Starts the service on 127.0.0.1:`port` with `env` added; resolves once it answers /health. */
export async function startChildService(port: number, env: Record<string, string | undefined>): Promise<Subprocess> {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/index.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...LENIENT_ADMISSION, ...env },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  for (let i = 0; i < READY_POLLS; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return proc
    if (proc.exitCode !== null || proc.signalCode !== null) break
    await Bun.sleep(READY_POLL_MS)
  }
  proc.kill('SIGKILL')
  throw new Error('the service did not start')
}

/** A client of the child service at `port`: `call(method, path, bearer, body?)` → `{ status, body }`. */
export function childClient(port: number) {
  const base = `http://127.0.0.1:${port}`
  return async (method: string, path: string, auth: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: res.status, body: (await res.json().catch(() => null)) as any }
  }
}
