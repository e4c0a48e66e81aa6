/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses 1,000 WAL pages, on the writer's thread, and ends with an fsync: bench:calls saw 54 of
 * them stall the loop for 12 ms on average (up to 30 ms), which set the POST p99. So the writer's
 * connection turns automatic checkpoints off and one worker thread per process
 * (wal-checkpoint-worker.ts) checkpoints every registered file through its own connection.
 *
 * Where no worker can start, the file keeps SQLite's automatic checkpoint: slower, never unsafe.
 * Under writes that never pause, the writer rewinds the WAL itself once the worker finds it long
 * (rewindIfLong).
 */
import type { Database } from 'bun:sqlite'

type Reply = { type: 'done'; id: number; error?: string; files?: string[] } | { type: 'error'; file: string; message: string } | { type: 'long'; file: string } | { type: 'gone'; file: string }

/** A worker that does not answer an add or remove within this long is treated as gone (it answers in < 1 ms). */
const REPLY_TIMEOUT_MS = 5_000

let worker: Worker | null = null
let nextId = 0
const pending = new Map<number, (reply: Extract<Reply, { type: 'done' }>) => void>()
/**
 * Per file in this process: the connections handing it over, and whether the worker took it. A
 * second opener of a file whose hand-over is still under way waits for the same answer; the
 * worker's connection goes when the last user closes.
 */
const files = new Map<string, { users: number; added: Promise<boolean> }>()
/** Files whose WAL the worker found long: their writer rewinds it after its next commit (rewindIfLong). */
const long = new Set<string>()

function theWorker(): Worker {
  if (worker) return worker
  // ref: false — the thread must not keep a process alive that has nothing else to do; smol: it
  // holds one connection per file and needs no large heap.
  const w = new Worker(new URL('./wal-checkpoint-worker.ts', import.meta.url).href, { ref: false, smol: true })
  w.onmessage = (event: MessageEvent<Reply>) => {
    const m = event.data
    if (m.type === 'done') {
      pending.get(m.id)?.(m)
      pending.delete(m.id)
    } else if (m.type === 'long') {
      if (files.has(m.file)) long.add(m.file)
    } else if (m.type === 'gone') {
      // The stores still open on it keep their count here: each one's close still ends it.
      long.delete(m.file)
      console.error(`wal checkpoints of ${m.file} stopped: the file is gone`)
    } else {
      // A failed pass is retried on the next interval; a persistent failure shows in the log of whoever watches stderr.
      console.error(`wal checkpoint of ${m.file} failed: ${m.message}`)
    }
  }
  worker = w
  return w
}

function ask(type: 'add' | 'remove' | 'held', file: string, rewindFrames?: number): Promise<string[]> {
  const id = nextId++
  return new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id)
      reject(new Error(`the WAL checkpointer did not answer ${type} ${file}`))
    }, REPLY_TIMEOUT_MS)
    pending.set(id, (reply) => {
      clearTimeout(timer)
      if (reply.error) reject(new Error(reply.error))
      else resolve(reply.files ?? [])
    })
    theWorker().postMessage({ type, file, id, rewindFrames })
  })
}

/**
 * Hands `db`'s checkpoints to the worker thread; where that fails, SQLite's own stay on. True when
 * the worker took them: the store then owes one stopCheckpointing when it closes. `rewindFrames`:
 * the WAL length the writer rewinds at (the worker's REWIND_FRAMES; tests lower it).
 */
export async function checkpointElsewhere(db: Database, file: string, rewindFrames?: number): Promise<boolean> {
  let entry = files.get(file)
  if (!entry) {
    entry = {
      users: 0,
      added: ask('add', file, rewindFrames).then(
        () => true,
        () => false,
      ),
    }
    files.set(file, entry)
  }
  entry.users++
  if (!(await entry.added)) {
    forget(file, entry)
    return false
  }
  db.run('PRAGMA wal_autocheckpoint=0')
  return true
}

/** A store checkpointElsewhere took is closing: the file is free of the worker once the last user's call resolves. */
export async function stopCheckpointing(file: string): Promise<void> {
  const entry = files.get(file)
  if (entry && forget(file, entry)) await ask('remove', file).catch(() => {})
}

/** The files the worker holds a connection to, as the worker itself answers (for tests and diagnosis). */
export function checkpointedFiles(): Promise<string[]> {
  return ask('held', '')
}

/** One user fewer; true when it was the last. */
function forget(file: string, entry: { users: number }): boolean {
  if (--entry.users > 0) return false
  files.delete(file)
  long.delete(file)
  return true
}

/**
 * Called by the writer between transactions, right after a commit. SQLite rewinds the WAL only when
 * a write begins with every frame copied to the database; under writes that never pause for a
 * worker pass (~30 ms), that moment never comes and the file grows as long as the load lasts
 * (bench:calls: 300 MB in 8 s). So once the worker reports the WAL long, the writer itself copies
 * what it wrote since the worker's pass and makes the next write start the WAL over (RESTART): one
 * pause of the writer (0.1–17 ms measured in bench:calls), once per REWIND_FRAMES written.
 * Never waits for other connections: when one is busy, the try is dropped and the worker reports
 * the WAL again after its next pass (every 250 ms).
 */
export function rewindIfLong(db: Database, file: string): void {
  // One try per report: if another connection is busy, the worker reports again after its next pass.
  if (!long.delete(file)) return
  const { timeout } = db.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()!
  db.run('PRAGMA busy_timeout=0')
  try {
    db.query('PRAGMA wal_checkpoint(RESTART)').get()
  } finally {
    db.run(`PRAGMA busy_timeout=${timeout}`)
  }
}
