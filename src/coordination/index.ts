import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { openLocalCoordination } from './local'
import type { Coordination } from './port'
import { openRedisCoordination } from './redis'

export type { Coordination } from './port'

/** Redis when a URL is configured (several instances), else the in-process adapter whose durable
 *  parts live in `${dataDir}/coordination.db` (a single machine). */
export async function openCoordination(opts: { dataDir: string; redisUrl?: string }): Promise<Coordination> {
  if (opts.redisUrl) return openRedisCoordination(opts.redisUrl)
  await mkdir(opts.dataDir, { recursive: true })
  return openLocalCoordination(join(opts.dataDir, 'coordination.db'))
}
