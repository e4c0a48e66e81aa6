/**
 * The WAL file's size. SQLite never shrinks the WAL by itself: once long (up to the rewind point,
 * wal-checkpoint-worker.ts REWIND_FRAMES, 256 MB) it keeps that size on disk, and a WAL that
 * filled the disk stays full even after its pages are copied into the database. Two things bring
 * it back: journal_size_limit cuts it to WAL_SIZE_LIMIT_BYTES each time it starts over, and a
 * TRUNCATE checkpoint (at open, before any write, and after a write fails for want of space)
 * empties it.
 */
import type { Database } from 'bun:sqlite'

/**
 * 64 MiB: at bench:calls' write rate (300 MB of WAL in 8 s with nothing pausing, ~40 MB/s) the
 * checkpointer's 250 ms passes leave about 10 MB to copy, so a WAL that starts over this long has
 * room for six passes without growing the file, and what stays on disk between bursts is bounded.
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024

/**
 * Copies every WAL frame into the database and truncates the WAL to zero bytes, never waiting for
 * another connection (a busy one leaves it for next time). `error` when the checkpoint failed, as
 * it does when the database file cannot grow to take the WAL's pages (SQLITE_FULL).
 */
export function truncateWal(db: Database): { done: boolean; error?: unknown } {
  const { timeout } = db.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()!
  db.run('PRAGMA busy_timeout=0')
  try {
    const r = db.query<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(TRUNCATE)').get()
    return { done: r !== null && r.busy === 0 }
  } catch (error) {
    return { done: false, error }
  } finally {
    db.run(`PRAGMA busy_timeout=${timeout}`)
  }
}
