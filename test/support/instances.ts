/**
 * Two instances of the service sharing one Redis and one data directory (the SQLite store in
 * shared mode stands in for a shared MongoDB), as several instances run in production.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRedis } from './redis'
import { startTestServer, type TestServer } from './server'

export interface InstancePair {
  a: TestServer
  b: TestServer
  redisUrl: string
  stop(): Promise<void>
}

export async function startInstancePair(env: Record<string, string> = {}): Promise<InstancePair> {
  const redis = await startRedis()
  const dir = mkdtempSync(join(tmpdir(), 'svc-pair-'))
  const shared = { REDIS_URL: redis.url, CONSOLE_TOKEN: 'console-token-for-two-instances', SQLITE_LOCKING: 'shared', ...env }
  const a = await startTestServer(shared, dir)
  const b = await startTestServer(shared, dir)
  return {
    a,
    b,
    redisUrl: redis.url,
    async stop() {
      await a.stop()
      await b.stop()
      await redis.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
