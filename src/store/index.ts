/** Picks the document store: MongoDB when a URL is configured, else the embedded SQLite file. */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { DocumentStore } from './port'

export async function openStore(opts: { dataDir: string; mongodbUrl?: string; sqliteLocking?: 'exclusive' | 'shared' }): Promise<DocumentStore> {
  if (opts.mongodbUrl) {
    // Loaded lazily so a SQLite deployment never loads the driver.
    const { openMongoStore } = await import('./mongodb')
    return openMongoStore(opts.mongodbUrl)
  }
  mkdirSync(opts.dataDir, { recursive: true })
  const { openSqliteStore } = await import('./sqlite')
  return openSqliteStore(join(opts.dataDir, 'service.db'), { exclusive: (opts.sqliteLocking ?? 'exclusive') === 'exclusive' })
}
