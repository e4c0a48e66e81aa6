/**
 * Lua scripts for the Redis coordination adapter. Each runs atomically on the server, which is what
 * makes "check the owner, then change" and "move due timers to in-flight" safe between instances.
 * `defineScript` lets node-redis send EVALSHA and fall back to EVAL on NOSCRIPT by itself.
 *
 * Timer keys (always passed in this order, see `timerKeys` in redis.ts):
 *   KEYS[1] due       ZSET  id → dueAt (service clock), unclaimed timers
 *   KEYS[2] inflight  ZSET  id → claim lease expiry (Redis server wall clock, ms)
 *   KEYS[3] payload   HASH  id → payload JSON
 *   KEYS[4] dueat     HASH  id → dueAt as written by the caller (exact; a ZSET score is a double
 *                           and the in-flight ZSET no longer holds it)
 *   KEYS[5] claims    HASH  id → current claim token
 */
import { type CommandParser, defineScript } from 'redis'

// Leases on claims are measured with the Redis server's TIME, not each instance's clock, so
// instances with skewed clocks still agree on when a claim has lapsed.
const WALL_NOW = `
local t = redis.call('TIME')
local wall = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// Returns in-flight timers whose claim lease has lapsed to the due set (the claimer crashed or is
// too slow); their old claim token is dropped so a late ack from the old claimer is a no-op.
const REQUEUE_LAPSED = `${WALL_NOW}
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', wall)
for _, id in ipairs(lapsed) do
  local d = redis.call('HGET', KEYS[4], id)
  if d then redis.call('ZADD', KEYS[1], d, id) end
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[5], id)
end
`

const pushAll = (parser: CommandParser, keys: string[], args: string[]): void => {
  for (const k of keys) parser.pushKey(k)
  for (const a of args) parser.push(a)
}

const asNumber = (reply: unknown): number => Number(reply)

/** Wraps a script body taking `keys` then string `args`, with a reply transform. */
function script<R>(numberOfKeys: number, body: string, transformReply: (reply: unknown) => R) {
  return defineScript({
    NUMBER_OF_KEYS: numberOfKeys,
    SCRIPT: body,
    parseCommand(parser: CommandParser, keys: string[], args: string[]) {
      pushAll(parser, keys, args)
    },
    transformReply,
  })
}

export const scripts = {
  /** KEYS: rate key. ARGV: windowMs. INCR and the first-hit expiry in one step, so a crash
   *  between them cannot leave a counter that never expires. */
  rateHit: script(
    1,
    `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`,
    asNumber,
  ),

  /** KEYS: slot set (ZSET member → expiry, server wall ms). ARGV: member, capacity, ttlMs.
   *  Drops lapsed members, then holds or renews `member` if it fits. Returns [acquired, held]. */
  slotAcquire: script(
    1,
    `${WALL_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', wall)
local held = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and held >= tonumber(ARGV[2]) then return {0, held} end
redis.call('ZADD', KEYS[1], wall + tonumber(ARGV[3]), ARGV[1])
-- The set outlives its longest member by nothing: an idle set costs no memory.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], math.floor(tonumber(last[2])))
return {1, redis.call('ZCARD', KEYS[1])}
`,
    (reply) => {
      const [acquired, held] = reply as [number, number]
      return { acquired: Number(acquired) === 1, held: Number(held) }
    },
  ),

  /** KEYS: slot set. Members holding a slot now (lapsed ones dropped first). */
  slotCount: script(
    1,
    `${WALL_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', wall)
return redis.call('ZCARD', KEYS[1])
`,
    asNumber,
  ),

  /** KEYS: lease. ARGV: owner, ttlMs. Extends only the owner's own lease. */
  leaseRenew: script(
    1,
    `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`,
    asNumber,
  ),

  /** KEYS: lease. ARGV: owner. Deletes only the owner's own lease. */
  leaseRelease: script(
    1,
    `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
    asNumber,
  ),

  /** ARGV: id, dueAt, payload JSON. Replaces any timer with this id, in-flight ones included
   *  (dropping the claim makes the old claimer's ack a no-op). */
  timerSchedule: script(
    5,
    `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1
`,
    asNumber,
  ),

  /** ARGV: id. Returns how many sets held it (0 = there was no such timer). */
  timerCancel: script(
    5,
    `
local n = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
return n
`,
    asNumber,
  ),

  /** ARGV: now (service clock), limit, leaseMs, claim token. Returns a flat list of
   *  id, dueAt, payload JSON for each claimed timer, oldest first (ties by id). */
  timerClaim: script(
    5,
    `${REQUEUE_LAPSED}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local expires = wall + tonumber(ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], expires, id)
  redis.call('HSET', KEYS[5], id, ARGV[4])
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[4], id) or '0'
  out[#out + 1] = redis.call('HGET', KEYS[3], id) or 'null'
end
return out
`,
    (reply) => reply as string[],
  ),

  /** ARGV: id, claim. Deletes the timer only while this claim is still the current one. */
  timerAck: script(
    5,
    `
if redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1
`,
    asNumber,
  ),

  /** ARGV: id, dueAt, payload JSON for each timer, repeated. Adds each timer missing, moves an
   *  unclaimed one due later to the earlier instant, leaves a claimed one; returns how many changed. */
  timerRestore: script(
    5,
    `
local n = 0
for i = 1, #ARGV, 3 do
  local id, due = ARGV[i], ARGV[i + 1]
  if not redis.call('ZSCORE', KEYS[2], id) then
    local cur = redis.call('HGET', KEYS[4], id)
    if not cur or not redis.call('ZSCORE', KEYS[1], id) or tonumber(cur) > tonumber(due) then
      redis.call('ZADD', KEYS[1], due, id)
      redis.call('HSET', KEYS[3], id, ARGV[i + 2])
      redis.call('HSET', KEYS[4], id, due)
      n = n + 1
    end
  end
end
return n
`,
    asNumber,
  ),

  /** KEYS: the timers' mark. ARGV: token. Makes the mark permanent while it is still this token's. */
  timerMarkEnd: script(
    1,
    `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PERSIST', KEYS[1])
return 1
`,
    asNumber,
  ),

  /** Earliest dueAt among claimable timers (lapsed claims count again), or nil. */
  timerNextDue: script(
    5,
    `${REQUEUE_LAPSED}
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if #first == 0 then return false end
return redis.call('HGET', KEYS[4], first[1])
`,
    (reply) => (reply === null || reply === undefined ? null : Number(reply)),
  ),

  /** Timers not yet acked or cancelled: unclaimed plus in-flight. */
  timerPending: script(
    5,
    `
return redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2])
`,
    asNumber,
  ),

  /** Timers due at ARGV[1] and not yet acked: unclaimed ones due by then, plus in-flight (claimed only once due). */
  timerDue: script(
    5,
    `
return redis.call('ZCOUNT', KEYS[1], '-inf', ARGV[1]) + redis.call('ZCARD', KEYS[2])
`,
    asNumber,
  ),
}

export type CoordinationScripts = typeof scripts
