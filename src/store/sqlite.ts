/**
 * SQLite adapter of the document-store port (embedded default, one machine): opening the file (the
 * exclusive claim, WAL, checkpoints handed to a thread) and the store, which keeps one collection
 * object per name (sqlite-collection.ts) and runs multi-collection commits. bun:sqlite is
 * synchronous; writes of one event-loop turn share a transaction (group-commit.ts) and resolve once
 * it has committed.
 */
import { Database, SQLiteError } from 'bun:sqlite'
import { DocCache } from './doc-cache'
import { GroupCommit } from './group-commit'
import { isOutOfSpace } from './out-of-space'
import type { CollectionSpec, CommitObserver, Doc, DocumentStore, StoreHealth, Write } from './port'
import { SqliteCollection } from './sqlite-collection'
import { checkpointElsewhere, rewindIfLong, stopCheckpointing } from './wal-checkpointer'
import { truncateWal, WAL_SIZE_LIMIT_BYTES } from './wal-truncate'

export interface SqliteOptions {
  /**
   * One process owns the file (the embedded store's normal case: several instances use MongoDB): a
   * second opener, in this process or another, is refused at open instead of silently sharing the
   * file (two instances with local coordination would both run every actor). The claim is an
   * exclusive lock on a sibling `<file>.lock`, which the OS lets go when the process ends, kill -9
   * included. The database itself is always opened shared, so the checkpointer thread can reach it.
   * Off: several processes on one machine may share the file; each then holds a shared lock on
   * `<file>.lock`, so shared and exclusive openers of one file refuse each other (the exclusive
   * owner reads from its document cache, doc-cache.ts, and must be the file's only writer).
   */
  exclusive?: boolean
  /** The WAL length (frames) at which the writer rewinds it (wal-checkpointer.ts rewindIfLong); tests lower it. */
  walRewindFrames?: number
  /** Hears each write batch's COMMIT time. */
  onCommit?: CommitObserver
  /** What the WAL file is cut back to once it starts over (wal-truncate.ts WAL_SIZE_LIMIT_BYTES); tests lower it. */
  walSizeLimitBytes?: number
}

/** The file is held by another opener in a mode that excludes this one: say so instead of waiting forever. */
export class StoreLockedError extends Error {
  constructor(file: string, exclusive: boolean) {
    super(
      exclusive
        ? `${file} is in use by another process; give each instance its own DATA_DIR, or set SQLITE_LOCKING=shared on every process that shares it`
        : `${file} is held exclusively by another process (SQLITE_LOCKING=exclusive); set SQLITE_LOCKING=shared on every process that shares it`,
    )
    this.name = 'StoreLockedError'
  }
}

/**
 * Holds `<file>.lock` for the life of the store — exclusively, or shared with other shared openers —
 * or throws StoreLockedError when someone holds it in a way that excludes this opener.
 */
function claim(file: string, exclusive: boolean): Database {
  const lock = new Database(`${file}.lock`, { create: true })
  try {
    // A previous process of ours that is exiting lets go of the lock within moments: 2 s is plenty
    // for that, and short enough that a real conflict is reported at once.
    lock.run('PRAGMA busy_timeout=2000')
    // In EXCLUSIVE locking mode the lock a write takes is never let go until the connection closes.
    // In EXCLUSIVE locking mode the lock a read takes (shared) is kept too.
    lock.run('PRAGMA locking_mode=EXCLUSIVE')
    if (exclusive) {
      lock.run('BEGIN EXCLUSIVE')
      lock.run('COMMIT')
    } else lock.query('SELECT count(*) FROM sqlite_master').get()
    return lock
  } catch (error) {
    lock.close()
    if (error instanceof SQLiteError && /SQLITE_BUSY/.test(error.code ?? '')) throw new StoreLockedError(file, exclusive)
    throw error
  }
}

export async function openSqliteStore(file: string, options: SqliteOptions = {}): Promise<SqliteStore> {
  const inMemory = file === ':memory:' || file === ''
  const exclusive = options.exclusive === true
  // An in-memory database is this connection's alone; there is no file to share.
  const lock = exclusive || !inMemory ? claim(file, exclusive) : null
  const db = new Database(file, { create: true, strict: true })
  try {
    // WAL lets readers run while one writer commits; NORMAL is durable across app crashes in WAL
    // mode (only an OS crash can lose the last commits); busy_timeout waits out other connections'
    // commits (shared mode) and the checkpointer's brief locks.
    db.run('PRAGMA busy_timeout=5000')
    db.run('PRAGMA journal_mode=WAL')
    db.run('PRAGMA synchronous=NORMAL')
    db.run(`PRAGMA journal_size_limit=${options.walSizeLimitBytes ?? WAL_SIZE_LIMIT_BYTES}`)
  } catch (error) {
    db.close()
    lock?.close()
    throw error
  }
  // Before any write: what the last run left in the WAL goes into the database and the WAL file
  // is emptied, so a WAL that filled the disk (its stop could not checkpoint) gives its space back
  // now. When even that fails for want of space, the store starts out reporting the full disk.
  const boot = truncateWal(db)
  // An in-memory database has no WAL and no file another connection could reach.
  const checkpointed = !inMemory && (await checkpointElsewhere(db, file, options.walRewindFrames))
  const store = new SqliteStore(db, file, lock, exclusive, checkpointed, options.onCommit)
  if (boot.error !== undefined) store.noteOutcome(boot.error)
  return store
}

/**
 * The readiness probe's write when the disk was full: 16 KiB, a large document's worth (a call's
 * snapshot with its transcript), so it needs fresh pages as real writes do rather than fitting in
 * a page's leftover room.
 */
const PROBE_BYTES = 16 * 1024

export class SqliteStore implements DocumentStore {
  readonly kind = 'sqlite' as const
  private readonly collections = new Map<string, SqliteCollection<Doc>>()
  private closed = false
  private readonly batch: GroupCommit
  /** Documents read by id, while this connection is the file's only writer (doc-cache.ts). */
  private readonly cache: DocCache | null

  constructor(
    readonly db: Database,
    private readonly file: string = db.filename,
    private readonly lock: Database | null = null,
    /** This process holds the file exclusively (the claim): no other connection writes it. */
    sole = false,
    /** The checkpointer thread took this file's checkpoints (wal-checkpointer.ts). */
    private readonly checkpointed = false,
    onCommit?: CommitObserver,
  ) {
    // With the exclusive claim nobody else writes the file, which is what makes both the turn's
    // shared read transaction and the document cache sound.
    this.cache = sole ? new DocCache() : null
    this.batch = new GroupCommit(db, file, sole, {
      afterCommit: checkpointed ? () => rewindIfLong(db, file) : undefined,
      onCommit,
      onOutcome: (error) => this.noteOutcome(error),
      onRollback: () => this.cache?.clear(),
    })
  }

  /** Since when writes fail for want of disk space (none has committed since); null while they go through. */
  private full: { since: number; message: string } | null = null

  /**
   * A write's outcome: an out-of-space failure marks the store full. Only the probe (health) clears
   * it: a small write that fits a page's leftover room commits on a full disk too, and would make
   * readiness flap while larger writes keep failing.
   */
  noteOutcome(error?: unknown): void {
    if (error === undefined || !isOutOfSpace(error)) return
    this.full ??= { since: Date.now(), message: error instanceof Error ? error.message : String(error) }
    // A WAL copied into the database already is space given back at once; between transactions.
    setImmediate(() => {
      if (!this.closed && !this.db.inTransaction) truncateWal(this.db)
    })
  }

  /**
   * Writes go through unless the last ones failed for want of space; then a probe write of about
   * one large document (PROBE_BYTES) tells whether space was freed since, so readiness recovers
   * without waiting for traffic a load balancer no longer sends.
   */
  async health(): Promise<StoreHealth> {
    if (this.closed) return { ok: false, cause: 'unavailable', message: 'the store is closed' }
    const full = this.full
    if (!full) return { ok: true }
    try {
      await this.batch.run(() => {
        this.db.run('CREATE TABLE IF NOT EXISTS _write_probe (b BLOB)')
        this.db.run(`INSERT INTO _write_probe (b) VALUES (zeroblob(${PROBE_BYTES}))`)
        this.db.run('DELETE FROM _write_probe')
      })
    } catch (error) {
      if (isOutOfSpace(error)) return { ok: false, cause: 'disk_full', message: `writes fail since ${new Date(full.since).toISOString()}: ${full.message}` }
      return { ok: false, cause: 'unavailable', message: error instanceof Error ? error.message : String(error) }
    }
    this.full = null
    return { ok: true }
  }

  async collection<T extends Doc>(spec: CollectionSpec): Promise<SqliteCollection<T>> {
    // One instance per name: the DDL runs once per connection and the prepared statements are shared.
    let c = this.collections.get(spec.name)
    if (!c) {
      c = new SqliteCollection<Doc>(this.db, spec, this.batch, this.cache)
      this.collections.set(spec.name, c)
    }
    // The cache holds one instance per name whatever T a caller names; the store does not check documents' shape.
    return c as SqliteCollection<T>
  }

  readonly atomic = true

  /**
   * Runs the writes inside the current batch under a savepoint: a failing one rolls back the
   * earlier ones of this commit only, and the batch commits the rest (group-commit.ts).
   */
  async commit(writes: Write[]): Promise<(Doc | null)[]> {
    const targets = writes.map((w) => {
      const c = this.collections.get(w.collection)
      if (!c) throw new Error(`commit: collection ${w.collection} is not open on this store`)
      return c
    })
    return this.batch.run(() => {
      this.db.run('SAVEPOINT store_commit')
      try {
        const results = writes.map((w, i) => targets[i]!.applyNow(w))
        this.db.run('RELEASE store_commit')
        return results
      } catch (error) {
        // A statement that failed leaves the transaction open; if SQLite ended it, the batch abandons it.
        if (this.db.inTransaction) {
          this.db.run('ROLLBACK TO store_commit')
          this.db.run('RELEASE store_commit')
        }
        throw error
      }
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.batch.flush()
    // A read after close fails as it did before the cache, rather than answering from memory.
    this.cache?.clear(true)
    // The checkpointer's connection goes first, so this one is the last and leaves no WAL behind.
    if (this.checkpointed) await stopCheckpointing(this.file)
    try {
      this.db.run('PRAGMA optimize') // refreshes planner statistics where SQLite judges it useful
    } catch {
      // optional (it fails on a full disk); closing must still let go of the file and its lock
    }
    // Writes made while the checkpointer stopped (a stopping service's last ones) are committed
    // now: a connection closed inside a transaction would roll them back.
    this.batch.flush()
    for (const c of this.collections.values()) c.finalize()
    this.db.close()
    this.lock?.close()
  }
}
