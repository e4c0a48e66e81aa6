/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses 1,000 WAL pages, on the writer's thread, and ends with an fsync: bench:calls saw 54 of
 * them stall the loop for 12 ms on average (up to 30 ms), which set the POST p99. So the writer's
 * connection turns automatic checkpoints off and one worker thread per process
 * (wal-checkpoint-worker.ts) checkpoints every registered file through its own connection.
 *
 * Where no worker can start, the file keeps SQLite's automatic checkpoint: slower, never unsafe.
 */
import type { Database } from 'bun:sqlite'

type Reply = { type: 'done'; id: number; error?: string } | { type: 'error'; file: string; message: string }

/** A worker that does not answer an add or remove within this long is treated as gone (it answers in < 1 ms). */
const REPLY_TIMEOUT_MS = 5_000

let worker: Worker | null = null
let nextId = 0
const pending = new Map<number, (error?: string) => void>()
/** Connections per file in this process: the worker's connection goes when the last one closes. */
const users = new Map<string, number>()

function theWorker(): Worker {
  if (worker) return worker
  // ref: false — the thread must not keep a process alive that has nothing else to do; smol: it
  // holds one connection per file and needs no large heap.
  const w = new Worker(new URL('./wal-checkpoint-worker.ts', import.meta.url).href, { ref: false, smol: true })
  w.onmessage = (event: MessageEvent<Reply>) => {
    const m = event.data
    if (m.type === 'done') {
      pending.get(m.id)?.(m.error)
      pending.delete(m.id)
    } else {
      // A failed pass is retried on the next interval; a persistent failure shows in the log of whoever watches stderr.
      console.error(`wal checkpoint of ${m.file} failed: ${m.message}`)
    }
  }
  worker = w
  return w
}

function ask(type: 'add' | 'remove', file: string): Promise<void> {
  const id = nextId++
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id)
      reject(new Error(`the WAL checkpointer did not answer ${type} ${file}`))
    }, REPLY_TIMEOUT_MS)
    pending.set(id, (error) => {
      clearTimeout(timer)
      if (error) reject(new Error(error))
      else resolve()
    })
    theWorker().postMessage({ type, file, id })
  })
}

/** Hands `db`'s checkpoints to the worker thread; where that fails, SQLite's own stay on. */
export async function checkpointElsewhere(db: Database, file: string): Promise<boolean> {
  try {
    const n = users.get(file) ?? 0
    if (n === 0) await ask('add', file)
    users.set(file, n + 1)
    db.run('PRAGMA wal_autocheckpoint=0')
    return true
  } catch {
    return false
  }
}

/** `db` is closing: the worker lets go of the file with its last user, so the file is free once this resolves. */
export async function stopCheckpointing(file: string): Promise<void> {
  const n = users.get(file) ?? 0
  if (n > 1) return void users.set(file, n - 1)
  if (n === 0) return
  users.delete(file)
  await ask('remove', file).catch(() => {})
}
