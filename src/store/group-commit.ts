/**
 * Group commit for the embedded store: writes made in the same turn of the event loop share one
 * SQLite transaction, committed on the next turn (setImmediate; under concurrent load at most every
 * COMMIT_GAP_MS, below). Each write's promise resolves only after that commit, so "awaited" still
 * means "durable"; what changes is that a page touched by many writes in one turn (a call's
 * snapshot, its projection and their index pages) goes to the WAL once instead of once per
 * statement. bench:calls measured the per-statement commits as the largest share of a call's
 * placing cost.
 *
 * When this process is the file's only user (the exclusive claim), reads share a turn's transaction
 * too: the first read of a turn begins it, so the WAL's read lock (two fcntl calls, ~5 µs measured
 * here) is taken once a turn instead of once a statement, which was most of a primary-key read. A
 * later write in the turn upgrades it; with no other writer its snapshot cannot be stale.
 *
 * Reads on the same connection see the batch before it commits, as they would on one writer; a
 * statement that fails (a duplicate key) rolls back only itself. If SQLite abandons the whole
 * transaction (disk full, I/O error), every write of the batch is rejected, none is reported done.
 *
 * Several connections to one file in one process (two instances in a test, SQLITE_LOCKING=shared):
 * SQLite's busy wait blocks the thread, so a connection starting a batch while another connection of
 * this process holds one open would wait for a commit that can only run on this same thread —
 * 5 s of busy_timeout, then "database is locked". So a new batch first commits the file's other
 * open batches here; other processes' batches are still waited out by busy_timeout.
 */
import type { Database, Statement } from 'bun:sqlite'

/**
 * Under concurrent load — the previous batch carried at least COMMIT_SIBLINGS writes — a batch is
 * committed no sooner than COMMIT_GAP_MS after the previous commit, so it gathers more writes.
 * bench:calls at 500 calls/s made ~1,900 commits per 1,000 calls (~12 writes each, each commit
 * writing every page it touched: ~20–25 WAL frames, ~170 µs) against 137 at saturation; a 2 ms gap
 * saved 0.1–0.2 ms of event loop a call (A B B A × 2, three rounds each). A lone writer (batches
 * of a write or three) still commits on the next turn, at full speed: PostgreSQL's commit_delay /
 * commit_siblings.
 */
const COMMIT_GAP_MS = 2
const COMMIT_SIBLINGS = 4

interface Waiter {
  resolve: () => void
  reject: (error: unknown) => void
}

/** Open batches per database file in this process. */
const openBatches = new Map<string, Set<GroupCommit>>()

export interface GroupCommitHooks {
  /** Runs between transactions after each commit (the WAL rewind, wal-checkpointer.ts); its failure is retried next time, never the writes'. */
  afterCommit?: () => void
  /** Hears each COMMIT of a batch that wrote, in seconds. */
  onCommit?: (seconds: number) => void
  /** Hears how writes end: the error of a write or COMMIT that failed, undefined for a batch that committed writes. */
  onOutcome?: (error?: unknown) => void
  /** A batch's transaction ended without committing: what was read inside it may be gone (doc-cache.ts). */
  onRollback?: () => void
}

export class GroupCommit {
  private waiters: Waiter[] = []
  private scheduled: { immediate: ReturnType<typeof setImmediate> } | { timer: ReturnType<typeof setTimeout> } | null = null
  private open = false
  /** When the last batch committed (performance.now()) and how many writes it carried. */
  private lastCommitAt = 0
  private lastBatch = 0
  /** Prepared once: `db.run` prepares its text on every call, ~1.3 µs of each BEGIN and COMMIT here. */
  private readonly statements: Record<'BEGIN' | 'BEGIN IMMEDIATE' | 'COMMIT' | 'ROLLBACK', Statement>

  constructor(
    private readonly db: Database,
    /** The database file: batches of other connections to it in this process are committed first. */
    private readonly file: string = db.filename,
    /** No other connection writes the file (the exclusive claim): reads may open the turn's transaction. */
    private readonly sole = false,
    private readonly hooks: GroupCommitHooks = {},
  ) {
    // db.query, not db.prepare: the connection finalizes these when it closes, so a close that is
    // the file's last still checkpoints and removes the WAL.
    this.statements = { BEGIN: db.query('BEGIN'), 'BEGIN IMMEDIATE': db.query('BEGIN IMMEDIATE'), COMMIT: db.query('COMMIT'), ROLLBACK: db.query('ROLLBACK') }
  }

  /** A transaction someone else began is open (a bulk load): its end is theirs, commit or rollback. */
  get foreign(): boolean {
    return !this.open && this.db.inTransaction
  }

  /** Runs `read` now, inside the turn's transaction when reads share it (`sole`). */
  read<R>(read: () => R): R {
    if (this.sole && !this.open && !this.db.inTransaction) this.begin('BEGIN')
    return read()
  }

  private begin(statement: 'BEGIN' | 'BEGIN IMMEDIATE'): void {
    const others = openBatches.get(this.file)
    if (others) for (const other of [...others]) if (other !== this) other.flush()
    this.statements[statement].run()
    this.open = true
    let batches = openBatches.get(this.file)
    if (!batches) {
      batches = new Set()
      openBatches.set(this.file, batches)
    }
    batches.add(this)
    const wait = this.lastBatch >= COMMIT_SIBLINGS ? COMMIT_GAP_MS - (performance.now() - this.lastCommitAt) : 0
    this.scheduled = wait > 0 ? { timer: setTimeout(() => this.flush(), wait) } : { immediate: setImmediate(() => this.flush()) }
  }

  /** Runs `write` now inside the open batch; the promise settles when the batch commits. */
  run<R>(write: () => R): Promise<R> {
    // A transaction someone else began (a bulk load) is theirs to commit: write straight into it.
    if (!this.open && this.db.inTransaction) return Promise.resolve(write())
    // The write lock up front, so another process's commit is waited out, not a busy error. (A
    // turn a read began is upgraded by its first write: only with `sole`, where nobody else writes.)
    if (!this.open) this.begin('BEGIN IMMEDIATE')
    let result: R
    try {
      result = write()
    } catch (error) {
      // A failed statement normally leaves the transaction open; if SQLite rolled it all back,
      // the earlier writes of this batch are gone too and must not be reported as done.
      if (!this.db.inTransaction) this.abandon(error)
      this.hooks.onOutcome?.(error)
      throw error
    }
    return new Promise<R>((resolve, reject) => this.waiters.push({ resolve: () => resolve(result), reject }))
  }

  /** Commits the open batch: on the next turn, or at once before the database closes. */
  flush(): void {
    if (!this.open) return
    const waiters = this.close()
    try {
      // Someone ended the batch's transaction under it (a ROLLBACK run on the connection): whether
      // it committed is not known here, so what was read inside it is not trusted. (Reading it
      // throws once the connection is closed: the catch below settles the batch then.)
      if (!this.db.inTransaction) this.hooks.onRollback?.()
      const start = performance.now()
      if (this.db.inTransaction) this.statements.COMMIT.run()
      this.lastCommitAt = performance.now()
      this.lastBatch = waiters.length
      // A turn's read-only transaction commits nothing worth timing.
      if (waiters.length > 0) this.hooks.onCommit?.((this.lastCommitAt - start) / 1000)
    } catch (error) {
      try {
        if (this.db.inTransaction) this.statements.ROLLBACK.run()
      } catch {
        // the connection already ended the transaction
      }
      this.hooks.onRollback?.()
      for (const w of waiters) w.reject(error)
      if (waiters.length > 0) this.hooks.onOutcome?.(error)
      return
    }
    if (waiters.length > 0) this.hooks.onOutcome?.()
    try {
      this.hooks.afterCommit?.()
    } catch {
      // the writes are committed; the chore runs again after the next commit
    }
    for (const w of waiters) w.resolve()
  }

  private abandon(error: unknown): void {
    const waiters = this.close()
    this.hooks.onRollback?.()
    for (const w of waiters) w.reject(error)
  }

  /** Ends the batch's bookkeeping and hands back its waiters to settle. */
  private close(): Waiter[] {
    if (this.scheduled && 'timer' in this.scheduled) clearTimeout(this.scheduled.timer)
    else if (this.scheduled) clearImmediate(this.scheduled.immediate)
    this.scheduled = null
    this.open = false
    const batches = openBatches.get(this.file)
    batches?.delete(this)
    if (batches?.size === 0) openBatches.delete(this.file)
    const waiters = this.waiters
    this.waiters = []
    return waiters
  }
}
