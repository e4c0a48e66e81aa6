/**
 * Two real service processes (`bun src/index.ts`, child-service.ts) on one throwaway Redis and one
 * DATA_DIR (the SQLite store in shared locking stands in for MongoDB), each on 127.0.0.1 and its
 * own port, as two containers behind a load balancer run. `kill` is kill -9 of one, by its pid.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { childClient, freePort, startChildService } from './child-service'
import { type RedisServer, startRedis } from './redis'

/** Waits on a cluster read its nodes over HTTP: 50 ms apart keeps a minute's wait from crowding the CPU the nodes share. */
export const CLUSTER_POLL_MS = 50

export const CLUSTER_TOKEN = 'cluster-console-token-0123456789abcdef'

export interface Node {
  name: string
  port: number
  url: string
  /** `call(method, path, bearer, body?)` → `{ status, body }` (child-service.ts). */
  call: ReturnType<typeof childClient>
  /** A console request with the cluster's token. */
  console(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>
  /** kill -9, and waits for the process to be gone. */
  kill(): Promise<void>
  alive(): boolean
}

export interface Cluster {
  a: Node
  b: Node
  redisUrl: string
  dataDir: string
  stop(): Promise<void>
}

/**
 * `env` goes to both; `a`/`b` to one each. `mediaTo`: where each instance's sandbox callees open
 * their media streams (SANDBOX_MEDIA_URL): `self` (default) or `other` (every stream crosses over).
 */
export async function startCluster(opts: { env?: Record<string, string>; a?: Record<string, string>; b?: Record<string, string>; mediaTo?: 'self' | 'other' } = {}): Promise<Cluster> {
  const redis: RedisServer = await startRedis()
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-cluster-'))
  const procs: Subprocess[] = []
  const stopAll = async () => {
    for (const p of procs) {
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
      await p.exited
    }
    await redis.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const ports = { a: await freePort(), b: await freePort() }
    const shared = {
      DATA_DIR: dataDir,
      REDIS_URL: redis.url,
      SQLITE_LOCKING: 'shared',
      CONSOLE_TOKEN: CLUSTER_TOKEN,
      // Media tokens are signed with it: a stream must verify on whichever instance it lands.
      SECRET_KEY: 'cluster-secret-key-0123456789abcdef0123456789',
      LOG_LEVEL: 'silent',
      ...opts.env,
    }
    const nodes = {} as { a: Node; b: Node }
    for (const name of ['a', 'b'] as const) {
      const other = name === 'a' ? ports.b : ports.a
      const env = { ...shared, ...(opts.mediaTo === 'other' ? { SANDBOX_MEDIA_URL: `http://127.0.0.1:${other}` } : {}), ...opts[name] }
      const proc = await startChildService(ports[name], env)
      procs.push(proc)
      const call = childClient(ports[name])
      nodes[name] = {
        name,
        port: ports[name],
        url: `http://127.0.0.1:${ports[name]}`,
        call,
        console: (method, path, body) => call(method, `/console${path}`, CLUSTER_TOKEN, body),
        async kill() {
          proc.kill('SIGKILL')
          await proc.exited
        },
        alive: () => proc.exitCode === null && proc.signalCode === null,
      }
    }
    return { ...nodes, redisUrl: redis.url, dataDir, stop: stopAll }
  } catch (err) {
    await stopAll()
    throw err
  }
}

/** Runs `jobs` with at most `width` at once. */
export async function inParallel<T>(items: T[], width: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await job(items[next++]!)
    }),
  )
}
