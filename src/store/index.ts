/** Picks the document store: MongoDB when a URL is configured, else the embedded SQLite file. */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { CommitObserver, DocumentStore } from './port'

export async function openStore(opts: { dataDir: string; mongodbUrl?: string; sqliteLocking?: 'exclusive' | 'shared'; onCommit?: CommitObserver }): Promise<DocumentStore> {
  if (opts.mongodbUrl) {
    // Loaded lazily so a SQLite deployment never loads the driver.
    const { openMongoStore } = await import('./mongodb')
    return openMongoStore(opts.mongodbUrl, undefined, opts.onCommit)
  }
  mkdirSync(opts.dataDir, { recursive: true })
  const { openSqliteStore } = await import('./sqlite')
  return openSqliteStore(join(opts.dataDir, 'service.db'), { exclusive: (opts.sqliteLocking ?? 'exclusive') === 'exclusive', onCommit: opts.onCommit })
}
