/**
 * The Redis coordination adapter: many service instances share one Redis. Every key and pub/sub
 * channel sits under `prefix` (default `svc:`) so tests, or several deployments on one Redis,
 * stay apart. Multi-step changes that must not interleave between instances are Lua scripts
 * (redis-scripts.ts). The timer keys share one hash tag so the scripts that touch all of them
 * would also run on a Redis Cluster.
 */
import { createClient } from 'redis'
import { randomId } from '../ids'
import { countArg, deliver, durationMs, encodePayload, instantMs } from './args'
import { claimReleases } from './claim-releases'
import type { ClaimedTimer, Coordination, IdempotencyBegin, RateHit, SlotHold, StoredResponse, TimerSpec } from './port'
import { scripts } from './redis-scripts'
import { bounded, COMMAND_TIMEOUT_MS, CoordinationUnavailable, LOST_CONNECTION_MS } from './unavailable'

export interface RedisCoordinationOptions {
  /** Key and channel prefix; default `svc:`. */
  prefix?: string
  /** Connection errors (node-redis reconnects by itself) and exceptions thrown by subscription
   *  handlers; default: console.error. */
  onError?: (err: unknown) => void
}

// At boot Redis may still be starting (docker-compose starts it beside the service; it accepts
// connections within a second or two), so the first connection is retried for up to 10 s, then
// boot fails with the cause instead of waiting forever. Once connected, node-redis reconnects
// without limit, as a running service should.
const BOOT_CONNECT_TIMEOUT_MS = 10_000
// Reconnect backoff: node-redis's own default (50 ms doubling, capped at 2 s), kept here because a
// custom strategy replaces it; the cap bounds how long an instance stays deaf after Redis returns.
const RECONNECT_BASE_MS = 50
const RECONNECT_MAX_MS = 2_000

function makeClient(url: string) {
  const bootDeadline = Date.now() + BOOT_CONNECT_TIMEOUT_MS
  let connectedOnce = false
  const client = createClient({
    url,
    scripts,
    socket: {
      reconnectStrategy: (retries: number, cause: Error) => {
        if (!connectedOnce && Date.now() >= bootDeadline) return cause
        return Math.min(RECONNECT_BASE_MS * 2 ** retries, RECONNECT_MAX_MS)
      },
    },
  })
  client.once('ready', () => {
    connectedOnce = true
  })
  return client
}
type Client = ReturnType<typeof makeClient>

/** The URL without its password, fit for an error message. */
function redact(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return '(unparseable REDIS_URL)'
  }
}

// What an idempotency key holds until the answer is stored: the in-flight marker with its owner,
// compared whole by the release (claim-releases.ts).
const inFlight = (owner: string) => JSON.stringify({ state: 'in_flight', owner })

// A key can expire between a failed SET NX and the GET that follows; then we try to claim it
// again. Two rounds cover that; a third miss would need the key to expire twice in a row.
const IDEMPOTENCY_CLAIM_ATTEMPTS = 3

export async function openRedisCoordination(url: string, opts: RedisCoordinationOptions = {}): Promise<Coordination> {
  const prefix = opts.prefix ?? 'svc:'
  const onError = opts.onError ?? ((err: unknown) => console.error('coordination (redis):', err))

  const client: Client = makeClient(url)
  // node-redis emits 'error' on connection trouble; an EventEmitter with no listener would throw.
  client.on('error', onError)
  // A connection in subscriber mode cannot run ordinary commands, so subscriptions get their own.
  // duplicate() copies the options, so it shares the boot-time reconnect rule above.
  const subscriber: Client = client.duplicate()
  subscriber.on('error', onError)
  try {
    await client.connect()
    await subscriber.connect()
  } catch (err) {
    client.destroy()
    subscriber.destroy()
    throw new Error(`coordination: cannot connect to Redis at ${redact(url)}: ${String(err)}`, { cause: err })
  }

  const commands = watchConnection(client)
  const subscriptions = watchConnection(subscriber)

  const idemKey = (key: string) => `${prefix}idem:${key}`
  const leaseKey = (name: string) => `${prefix}lease:${name}`
  const slotKey = (set: string) => `${prefix}slots:${set}`
  const channelName = (channel: string) => `${prefix}chan:${channel}`
  const tag = `${prefix}{timers}`
  const timerKeys = [`${tag}:due`, `${tag}:inflight`, `${tag}:payload`, `${tag}:dueat`, `${tag}:claims`]
  // Beside the timers (same hash slot): gone exactly when they are.
  const markKey = `${tag}:mark`
  let closed = false
  // The same compare-and-delete as a lease's release, on the claim's whole value.
  const releases = claimReleases(
    (key, owner) => client.leaseRelease([key], [inFlight(owner)]),
    () => closed,
    onError,
  )

  const adapter: Coordination = {
    kind: 'redis',

    async idempotencyBegin(key: string, ttlMs: number, owner = randomId()): Promise<IdempotencyBegin> {
      const px = durationMs('ttlMs', ttlMs)
      for (let attempt = 0; attempt < IDEMPOTENCY_CLAIM_ATTEMPTS; attempt++) {
        const set = await client.set(idemKey(key), inFlight(owner), {
          expiration: { type: 'PX', value: px },
          condition: 'NX',
        })
        if (set !== null) return { state: 'started' }
        const current = await client.get(idemKey(key))
        if (current === null) continue
        // cast: the key holds only what this adapter wrote (inFlight() or the done record).
        const found = JSON.parse(current) as IdempotencyBegin
        return found.state === 'in_flight' ? { state: 'in_flight' } : found
      }
      // Unreachable in practice (see IDEMPOTENCY_CLAIM_ATTEMPTS); "busy" is the safe answer.
      return { state: 'in_flight' }
    },

    async idempotencyComplete(key: string, response: StoredResponse, ttlMs: number): Promise<void> {
      const value = JSON.stringify({ state: 'done', response })
      await client.set(idemKey(key), value, { expiration: { type: 'PX', value: durationMs('ttlMs', ttlMs) } })
    },

    async idempotencyRelease(key: string, owner: string): Promise<void> {
      await releases.release(idemKey(key), owner)
    },

    async rateHit(key: string, limit: number, windowMs: number, now: number): Promise<RateHit> {
      countArg('limit', limit)
      const window = durationMs('windowMs', windowMs)
      const index = Math.floor(instantMs('now', now) / window)
      // Expiry is a full window of wall time: at least the rest of the window on the system
      // clock, and it keeps the counter alive while a manual clock stands still for a while.
      const count = await client.rateHit([`${prefix}rate:${key}:${index}`], [String(window)])
      return {
        allowed: count <= limit,
        limit,
        count,
        remaining: Math.max(0, limit - count),
        resetAt: (index + 1) * window,
      }
    },

    async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
      const px = durationMs('ttlMs', ttlMs)
      const set = await client.set(leaseKey(name), owner, { expiration: { type: 'PX', value: px }, condition: 'NX' })
      if (set !== null) return true
      return (await client.leaseRenew([leaseKey(name)], [owner, String(px)])) === 1
    },

    async releaseLease(name: string, owner: string): Promise<void> {
      await client.leaseRelease([leaseKey(name)], [owner])
    },

    async leaseOwner(name: string): Promise<string | null> {
      return await client.get(leaseKey(name))
    },

    async acquireSlot(set: string, member: string, capacity: number, ttlMs: number): Promise<SlotHold> {
      countArg('capacity', capacity)
      return await client.slotAcquire([slotKey(set)], [member, String(capacity), String(durationMs('ttlMs', ttlMs))])
    },

    async releaseSlot(set: string, member: string): Promise<void> {
      await client.zRem(slotKey(set), member)
    },

    async slotsHeld(set: string): Promise<number> {
      return await client.slotCount([slotKey(set)], [])
    },

    async publish(channel: string, message: string): Promise<void> {
      await client.publish(channelName(channel), message)
    },

    async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
      // A fresh listener per call: node-redis keeps listeners in a Set, so subscribing the same
      // handler twice would otherwise share (and unsubscribe) one entry.
      const listener = (message: string) => deliver(handler, message, onError)
      // Resolves when Redis acknowledges SUBSCRIBE, i.e. once messages are being delivered.
      await subscriber.subscribe(channelName(channel), listener)
      let active = true
      return async () => {
        if (!active || closed) return
        active = false
        // node-redis drops the listener at once; only Redis's acknowledgement may wait. A Redis
        // that is down or stalled cannot deliver to it anyway (a reconnect subscribes only the
        // channels that still have listeners), so after the bound the unsubscribe counts as done.
        const unsubscribed = bounded('unsubscribe', () => subscriber.unsubscribe(channelName(channel), listener))
        if (subscriptions.down()) return void unsubscribed.catch(() => {})
        await unsubscribed.catch((error: unknown) => {
          if (!(error instanceof CoordinationUnavailable)) throw error
        })
      }
    },

    async scheduleTimer(timer: TimerSpec): Promise<void> {
      const dueAt = instantMs('dueAt', timer.dueAt)
      await client.timerSchedule(timerKeys, [timer.id, String(dueAt), encodePayload(timer.payload)])
    },

    async cancelTimer(id: string): Promise<boolean> {
      return (await client.timerCancel(timerKeys, [id])) > 0
    },

    async claimDueTimers(now: number, limit: number, leaseMs: number): Promise<ClaimedTimer[]> {
      if (countArg('limit', limit) === 0) return []
      const lease = durationMs('leaseMs', leaseMs)
      // One token per batch is enough: a claim only has to differ from every other claim of the
      // same timer, and each batch gets a fresh random one.
      const claim = randomId()
      const flat = await client.timerClaim(timerKeys, [String(instantMs('now', now)), String(limit), String(lease), claim])
      const claimed: ClaimedTimer[] = []
      for (let i = 0; i + 2 < flat.length; i += 3) {
        claimed.push({ id: flat[i], dueAt: Number(flat[i + 1]), payload: JSON.parse(flat[i + 2]), claim })
      }
      return claimed
    },

    async ackTimer(id: string, claim: string): Promise<void> {
      await client.timerAck(timerKeys, [id, claim])
    },

    async restoreTimers(timers: TimerSpec[]): Promise<number> {
      if (timers.length === 0) return 0
      const args = timers.flatMap((t) => [t.id, String(instantMs('dueAt', t.dueAt)), encodePayload(t.payload)])
      return await client.timerRestore(timerKeys, args)
    },

    async beginTimerRebuild(token: string, ttlMs: number): Promise<void> {
      await client.set(markKey, token, { expiration: { type: 'PX', value: durationMs('ttlMs', ttlMs) } })
    },

    async endTimerRebuild(token: string): Promise<boolean> {
      return (await client.timerMarkEnd([markKey], [token])) === 1
    },

    async timersMarked(): Promise<boolean> {
      return (await client.exists(markKey)) === 1
    },

    async nextTimerDueAt(): Promise<number | null> {
      return await client.timerNextDue(timerKeys, [])
    },

    async pendingTimers(): Promise<number> {
      return await client.timerPending(timerKeys, [])
    },

    async timersDue(now: number): Promise<number> {
      return await client.timerDue(timerKeys, [String(now)])
    },

    async ping(): Promise<void> {
      await client.ping()
    },

    async close(): Promise<void> {
      if (closed) return
      closed = true
      // close() waits for commands already sent, so in-flight calls finish first; a Redis that is
      // down or stalled would hold that forever, so after one command's bound the sockets just go.
      const done = Promise.allSettled([subscriber.close(), client.close()])
      const lost = commands.down() || subscriptions.down()
      if (lost || (await Promise.race([done.then(() => true), Bun.sleep(COMMAND_TIMEOUT_MS).then(() => false)])) === false) {
        subscriber.destroy()
        client.destroy()
      }
    },
  }
  return boundedOperations(adapter, commands)
}

/**
 * Since when a connection has been lost (null while it is up): node-redis reconnects by itself,
 * and meanwhile commands only queue. `down` is true once that has lasted LOST_CONNECTION_MS.
 */
function watchConnection(client: Client): { since(): number | null; down(): boolean } {
  let lostSince: number | null = null
  client.on('ready', () => {
    lostSince = null
  })
  for (const event of ['reconnecting', 'end'] as const) {
    client.on(event, () => {
      lostSince ??= Date.now()
    })
  }
  return {
    since: () => lostSince,
    down: () => lostSince !== null && Date.now() - lostSince >= LOST_CONNECTION_MS,
  }
}

/** Operations that keep trying after the caller was told (claim-releases.ts): started even while the connection is down. */
const KEPT_UNTIL_ANSWERED = new Set(['idempotencyRelease'])

/**
 * The adapter with each operation bounded (unavailable.ts): within COMMAND_TIMEOUT_MS it answers or
 * fails with CoordinationUnavailable naming the operation. Once the connection has been down for
 * LOST_CONNECTION_MS, operations fail at once instead of each waiting out the bound. `close` bounds itself.
 */
function boundedOperations(adapter: Coordination, connection: ReturnType<typeof watchConnection>): Coordination {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(adapter)) {
    if (typeof value !== 'function' || name === 'close') {
      out[name] = value
      continue
    }
    out[name] = (...args: unknown[]) => {
      if (connection.down()) {
        const kept = KEPT_UNTIL_ANSWERED.has(name)
        if (kept) value.apply(adapter, args).catch(() => {})
        const since = new Date(connection.since() ?? Date.now()).toISOString()
        return Promise.reject(new CoordinationUnavailable(`Redis is unreachable (reconnecting since ${since}); ${name} ${kept ? 'kept until it answers' : 'not sent'}`))
      }
      return bounded(name, () => value.apply(adapter, args))
    }
  }
  // Same members with the same signatures; only each method's promise is bounded.
  return out as unknown as Coordination
}
