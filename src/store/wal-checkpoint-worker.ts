/**
 * The checkpointer thread (wal-checkpointer.ts starts it): its own connection to each registered
 * file copies the WAL into the database file with a PASSIVE checkpoint, which never blocks the
 * service's writer. A checkpoint ends with an fsync of the database file, 15–30 ms on this
 * machine's disk: on the event loop that was a stall of every request in flight.
 */
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'

declare const self: Worker

/**
 * How often each file is checkpointed. A look with nothing to copy costs 0.1 ms; at bench:calls'
 * write rate 250 ms gathers a few hundred pages, about SQLite's own 1,000-page trigger.
 */
const INTERVAL_MS = 250
/**
 * Frames left in the WAL after a passive pass beyond which it waits for the writer (RESTART): a
 * WAL that never catches up would grow without bound. 50,000 frames of 4 KiB is 200 MB.
 */
const RESTART_FRAMES = 50_000
/**
 * A WAL this long (frames) is reported to the writer, which rewinds it (wal-checkpointer.ts
 * rewindIfLong). 65,536 frames of 4 KiB is 256 MB: about the most disk the WAL takes under writes
 * that never pause, and what a restart after a crash reads back. The rewind held the writer
 * 0.1–17 ms in bench:calls (at a 20,000-frame setting, five times a run).
 */
const REWIND_FRAMES = 65_536

/** The worker's connection per file, and the WAL length it reports. */
const files = new Map<string, { db: Database; rewindFrames: number }>()

/**
 * A file removed under its open store (its directory deleted) has nothing left worth copying, and
 * its passes fail (SQLITE_IOERR_FSTAT) or copy into a file no one can open again. The connection
 * goes and the file is forgotten, reported once; the store is told nothing, as its own writes
 * fail or vanish with the file all the same.
 */
function drop(file: string, db: Database): void {
  db.close()
  files.delete(file)
  postMessage({ type: 'gone', file })
}

function checkpointAll(): void {
  for (const [file, { db, rewindFrames }] of files) {
    // Before the pass too: a removed file's pass can succeed (nothing new to copy), and its
    // connection would be held unseen until the store closes. A stat costs microseconds.
    if (!existsSync(file)) {
      drop(file, db)
      continue
    }
    try {
      const r = db.query<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').get()!
      // Right after a pass: what the writer has left to copy when it rewinds is what it wrote since.
      if (r.log >= rewindFrames) postMessage({ type: 'long', file })
      if (r.log - r.checkpointed > RESTART_FRAMES) db.run('PRAGMA wal_checkpoint(RESTART)')
    } catch (error) {
      // Removed during the pass: one report, not one per pass from now on.
      if (!existsSync(file)) drop(file, db)
      else postMessage({ type: 'error', file, message: error instanceof Error ? error.message : String(error) })
    }
  }
}

setInterval(checkpointAll, INTERVAL_MS)

self.onmessage = (event: MessageEvent<{ type: 'add' | 'remove' | 'held'; file: string; id: number; rewindFrames?: number }>) => {
  const { type, file, id, rewindFrames } = event.data
  if (type === 'held') {
    postMessage({ type: 'done', id, files: [...files.keys()] })
    return
  }
  try {
    if (type === 'add' && !files.has(file)) {
      const db = new Database(file)
      // The writer holds its lock for one event-loop turn at a time; the checkpoint itself never needs it.
      db.run('PRAGMA busy_timeout=5000')
      files.set(file, { db, rewindFrames: rewindFrames ?? REWIND_FRAMES })
    }
    if (type === 'remove') {
      files.get(file)?.db.close()
      files.delete(file)
    }
    postMessage({ type: 'done', id })
  } catch (error) {
    postMessage({ type: 'done', id, error: error instanceof Error ? error.message : String(error) })
  }
}
