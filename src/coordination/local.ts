/**
 * The in-process coordination adapter: one machine, one process. What must survive a restart
 * (idempotency records and durable timers) lives in a SQLite file; rate counters, leases and
 * pub/sub live in this process's memory, which is only correct because no other process shares
 * them — run several instances and you need the Redis adapter.
 *
 * Wall-clock durations (idempotency ttl, lease ttl, timer claim leases) use Date.now(), as Redis
 * does with PX; the service clock only enters where the port passes `now` in.
 */
import { Database } from 'bun:sqlite'
import { randomId } from '../ids'
import { countArg, deliver, durationMs, encodePayload, instantMs, logHandlerError } from './args'
import type { ClaimedTimer, Coordination, IdempotencyBegin, RateHit, StoredResponse, TimerSpec } from './port'

// Expired idempotency rows are ignored on read at once; deleting them is housekeeping, so it runs
// at most once a minute: the table then holds at most about a minute of dead rows past their ttl.
const IDEMPOTENCY_PURGE_INTERVAL_MS = 60_000
// Finished rate windows are dropped by a scan every this many hits: the scan is O(keys), so this
// spreads its cost thinly while bounding the map to the keys seen in about 1000 hits.
const RATE_SWEEP_EVERY_HITS = 1000

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY,
  state TEXT NOT NULL,            -- 'in_flight' | 'done'
  response TEXT,                  -- StoredResponse JSON when done
  expires_at INTEGER NOT NULL,    -- wall-clock ms
  owner TEXT                      -- the request holding it while in_flight
);
CREATE INDEX IF NOT EXISTS idempotency_expires ON idempotency (expires_at);
CREATE TABLE IF NOT EXISTS timers (
  id TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL,        -- service clock ms
  payload TEXT NOT NULL,          -- JSON
  claim TEXT,                     -- current claim token, NULL when unclaimed
  claim_expires INTEGER           -- wall-clock ms when the claim lapses
);
CREATE INDEX IF NOT EXISTS timers_due ON timers (due_at, id);
CREATE TABLE IF NOT EXISTS timer_mark (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  token TEXT NOT NULL,            -- the rebuild that set it
  expires_at INTEGER              -- wall-clock ms while a rebuild runs, NULL once it ended
);
`

interface IdemRow {
  state: string
  response: string | null
  expires_at: number
}
interface TimerRow {
  id: string
  due_at: number
  payload: string
}
interface Subscription {
  handler: (message: string) => void
  active: boolean
}

export async function openLocalCoordination(file: string): Promise<Coordination> {
  const db = new Database(file, { create: true })
  // WAL: readers do not block the writer and a crash mid-write leaves the file consistent.
  db.exec('PRAGMA journal_mode = WAL')
  // NORMAL under WAL, as the embedded store (store/sqlite.ts): a killed process loses no committed
  // write; only an OS crash or power cut may drop the last few. FULL fsynced every idempotency key
  // and timer write, the largest cost of placing a call (bench:calls profile).
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec(SCHEMA)
  // A file from before claims had owners: its in-flight claims (none has one) lapse with their ttl.
  if (
    !db
      .query<{ name: string }, []>('PRAGMA table_info(idempotency)')
      .all()
      .some((c) => c.name === 'owner')
  ) {
    db.exec('ALTER TABLE idempotency ADD COLUMN owner TEXT')
  }

  const q = {
    idemGet: db.query<IdemRow, [string]>('SELECT state, response, expires_at FROM idempotency WHERE key = ?'),
    idemPut: db.query('INSERT OR REPLACE INTO idempotency (key, state, response, expires_at, owner) VALUES (?, ?, ?, ?, ?)'),
    idemRelease: db.query("DELETE FROM idempotency WHERE key = ? AND state = 'in_flight' AND owner = ?"),
    idemPurge: db.query('DELETE FROM idempotency WHERE expires_at <= ?'),
    timerPut: db.query('INSERT OR REPLACE INTO timers (id, due_at, payload, claim, claim_expires) VALUES (?, ?, ?, NULL, NULL)'),
    timerDel: db.query('DELETE FROM timers WHERE id = ?'),
    timerAck: db.query('DELETE FROM timers WHERE id = ? AND claim = ?'),
    timerRequeue: db.query('UPDATE timers SET claim = NULL, claim_expires = NULL WHERE claim IS NOT NULL AND claim_expires <= ?'),
    timerDue: db.query<TimerRow, [number, number]>('SELECT id, due_at, payload FROM timers WHERE claim IS NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?'),
    timerClaim: db.query('UPDATE timers SET claim = ?, claim_expires = ? WHERE id = ?'),
    timerNext: db.query<{ next: number | null }, [number]>('SELECT MIN(due_at) AS next FROM timers WHERE claim IS NULL OR claim_expires <= ?'),
    timerCount: db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM timers'),
    timerDueCount: db.query<{ n: number }, [number]>('SELECT COUNT(*) AS n FROM timers WHERE due_at <= ?'),
    // A missing timer is added; an unclaimed one due later is moved earlier; a claimed one is left.
    timerRestore: db.query(
      `INSERT INTO timers (id, due_at, payload, claim, claim_expires) VALUES (?, ?, ?, NULL, NULL)
       ON CONFLICT (id) DO UPDATE SET due_at = excluded.due_at, payload = excluded.payload
       WHERE timers.claim IS NULL AND timers.due_at > excluded.due_at`,
    ),
    markSet: db.query('INSERT OR REPLACE INTO timer_mark (id, token, expires_at) VALUES (1, ?, ?)'),
    markEnd: db.query('UPDATE timer_mark SET expires_at = NULL WHERE id = 1 AND token = ? AND (expires_at IS NULL OR expires_at > ?)'),
    markLive: db.query<{ n: number }, [number]>('SELECT COUNT(*) AS n FROM timer_mark WHERE expires_at IS NULL OR expires_at > ?'),
  }

  let lastPurge = 0
  const idempotencyBegin = db.transaction((key: string, ttl: number, owner: string): IdempotencyBegin => {
    const wall = Date.now()
    if (wall - lastPurge >= IDEMPOTENCY_PURGE_INTERVAL_MS) {
      q.idemPurge.run(wall)
      lastPurge = wall
    }
    const row = q.idemGet.get(key)
    if (row && row.expires_at > wall) {
      if (row.state === 'done' && row.response !== null) {
        return { state: 'done', response: JSON.parse(row.response) as StoredResponse }
      }
      return { state: 'in_flight' }
    }
    q.idemPut.run(key, 'in_flight', null, wall + ttl, owner)
    return { state: 'started' }
  })

  const claimDue = db.transaction((now: number, limit: number, lease: number): ClaimedTimer[] => {
    const wall = Date.now()
    // Claims whose lease lapsed (the claimer crashed or is too slow) become claimable again.
    q.timerRequeue.run(wall)
    const rows = q.timerDue.all(now, limit)
    // One token per batch: it only has to differ from every other claim of the same timer.
    const claim = randomId()
    for (const row of rows) q.timerClaim.run(claim, wall + lease, row.id)
    return rows.map((row) => ({ id: row.id, dueAt: row.due_at, payload: JSON.parse(row.payload), claim }))
  })

  const restore = db.transaction((timers: TimerSpec[]): number => {
    let changed = 0
    for (const t of timers) changed += q.timerRestore.run(t.id, instantMs('dueAt', t.dueAt), encodePayload(t.payload)).changes
    return changed
  })

  // In memory only (single process, see the header).
  const rates = new Map<string, { index: number; count: number; resetAt: number }>()
  let rateHits = 0
  const leases = new Map<string, { owner: string; expiresAt: number }>()
  /** set → member → expiry (wall ms). */
  const slots = new Map<string, Map<string, number>>()
  const channels = new Map<string, Set<Subscription>>()
  let closed = false

  const liveSlots = (set: string): Map<string, number> => {
    let members = slots.get(set)
    if (!members) {
      members = new Map()
      slots.set(set, members)
    }
    const wall = Date.now()
    for (const [member, expiresAt] of members) if (expiresAt <= wall) members.delete(member)
    return members
  }

  const liveLease = (name: string) => {
    const lease = leases.get(name)
    if (lease && lease.expiresAt <= Date.now()) {
      leases.delete(name)
      return undefined
    }
    return lease
  }

  return {
    kind: 'local',

    async idempotencyBegin(key, ttlMs, owner = randomId()) {
      return idempotencyBegin(key, durationMs('ttlMs', ttlMs), owner)
    },

    async idempotencyComplete(key, response, ttlMs) {
      q.idemPut.run(key, 'done', JSON.stringify(response), Date.now() + durationMs('ttlMs', ttlMs), null)
    },

    async idempotencyRelease(key, owner) {
      q.idemRelease.run(key, owner)
    },

    async rateHit(key, limit, windowMs, now): Promise<RateHit> {
      countArg('limit', limit)
      const window = durationMs('windowMs', windowMs)
      const index = Math.floor(instantMs('now', now) / window)
      const resetAt = (index + 1) * window
      if (++rateHits % RATE_SWEEP_EVERY_HITS === 0) {
        for (const [k, r] of rates) if (r.resetAt <= now) rates.delete(k)
      }
      // Keyed by window size too, so a key used with two window sizes does not reset one
      // counter each time the other is hit.
      const mapKey = `${key}\u0000${window}`
      let entry = rates.get(mapKey)
      if (!entry || entry.index !== index) {
        entry = { index, count: 0, resetAt }
        rates.set(mapKey, entry)
      }
      const count = ++entry.count
      return { allowed: count <= limit, limit, count, remaining: Math.max(0, limit - count), resetAt }
    },

    async acquireLease(name, owner, ttlMs) {
      const ttl = durationMs('ttlMs', ttlMs)
      const lease = liveLease(name)
      if (lease && lease.owner !== owner) return false
      leases.set(name, { owner, expiresAt: Date.now() + ttl })
      return true
    },

    async releaseLease(name, owner) {
      if (liveLease(name)?.owner === owner) leases.delete(name)
    },

    async leaseOwner(name) {
      return liveLease(name)?.owner ?? null
    },

    async acquireSlot(set, member, capacity, ttlMs) {
      countArg('capacity', capacity)
      const ttl = durationMs('ttlMs', ttlMs)
      const members = liveSlots(set)
      if (!members.has(member) && members.size >= capacity) return { acquired: false, held: members.size }
      members.set(member, Date.now() + ttl)
      return { acquired: true, held: members.size }
    },

    async releaseSlot(set, member) {
      const members = slots.get(set)
      members?.delete(member)
      if (members?.size === 0) slots.delete(set)
    },

    async slotsHeld(set) {
      const held = liveSlots(set).size
      if (held === 0) slots.delete(set)
      return held
    },

    async publish(channel, message) {
      const subs = channels.get(channel)
      if (!subs || subs.size === 0) return
      const snapshot = [...subs]
      // Delivered asynchronously, as over Redis, so a handler never runs inside publish().
      // A subscription cancelled before delivery gets nothing.
      queueMicrotask(() => {
        for (const sub of snapshot) if (sub.active) deliver(sub.handler, message, logHandlerError)
      })
    },

    async subscribe(channel, handler) {
      const sub: Subscription = { handler, active: true }
      let subs = channels.get(channel)
      if (!subs) {
        subs = new Set()
        channels.set(channel, subs)
      }
      subs.add(sub)
      return async () => {
        sub.active = false
        subs.delete(sub)
        if (subs.size === 0 && channels.get(channel) === subs) channels.delete(channel)
      }
    },

    async scheduleTimer(timer: TimerSpec) {
      q.timerPut.run(timer.id, instantMs('dueAt', timer.dueAt), encodePayload(timer.payload))
    },

    async cancelTimer(id) {
      return q.timerDel.run(id).changes > 0
    },

    async claimDueTimers(now, limit, leaseMs) {
      if (countArg('limit', limit) === 0) return []
      return claimDue(instantMs('now', now), limit, durationMs('leaseMs', leaseMs))
    },

    async ackTimer(id, claim) {
      q.timerAck.run(id, claim)
    },

    async restoreTimers(timers: TimerSpec[]) {
      return timers.length === 0 ? 0 : restore(timers)
    },

    async beginTimerRebuild(token: string, ttlMs: number) {
      q.markSet.run(token, Date.now() + durationMs('ttlMs', ttlMs))
    },

    async endTimerRebuild(token: string) {
      return q.markEnd.run(token, Date.now()).changes > 0
    },

    async timersMarked() {
      return (q.markLive.get(Date.now())?.n ?? 0) > 0
    },

    async nextTimerDueAt() {
      return q.timerNext.get(Date.now())?.next ?? null
    },

    async pendingTimers() {
      return q.timerCount.get()?.n ?? 0
    },

    async timersDue(now: number) {
      return q.timerDueCount.get(now)?.n ?? 0
    },

    async ping() {
      db.query('SELECT 1').get()
    },

    async close() {
      if (closed) return
      closed = true
      for (const subs of channels.values()) for (const sub of subs) sub.active = false
      channels.clear()
      db.close()
    },
  }
}
