/**
 * Admission control: a new call (placed through the API, ringing in, a browser's, or a waiting
 * call about to ring) is taken only while the instance has headroom for it, so that the calls already live keep
 * their audio. Headroom is five signals, each with its limit (docs/production.md "Capacity"):
 * calls on this instance, event-loop lag, the agent audio's lead at the line, the wait for a
 * speech decoder, and resident memory. Refused, the API answers 503 with Retry-After (the web
 * widget's call button too), an inbound call hears busy, and a waiting call or a campaign's recipient waits and tries again.
 */

import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'

export type RefusalReason = 'calls' | 'loop_lag' | 'playout_lead' | 'decoder_queue' | 'memory'
export const REFUSAL_REASONS: readonly RefusalReason[] = ['calls', 'loop_lag', 'playout_lead', 'decoder_queue', 'memory']

export interface AdmissionLimits {
  /** Calls live on this instance (CALLS_MAX_LIVE). */
  maxCalls: number
  /** Median event-loop lag of the last 2 s, ms (CALLS_MAX_LOOP_LAG_MS). */
  maxLoopLagMs: number
  /** Lowest lead of the agent's audio at the line in the last 2–4 s, ms. */
  minPlayoutLeadMs: number
  /** The oldest utterance's wait for a speech decoder, ms. */
  maxDecoderWaitMs: number
  /** Resident memory, bytes. */
  maxRssBytes: number
}

/**
 * The agent's audio is sent 1 s ahead of the line (playout.ts LEAD_MS): a lead down to half still
 * leaves the caller's audio whole, and is the margin to stop taking calls before a gap. A loop
 * whose 20 ms timers are mostly (the median) 50 ms late is busy more than it is free (an idle one: ~1 ms). A caller whose utterance waited 1 s for a decoder already waits for the
 * reply; memory stops at 80% of what the instance may use, before the kernel's OOM killer.
 */
export const DEFAULT_LIMITS: Pick<AdmissionLimits, 'maxDecoderWaitMs'> = { maxDecoderWaitMs: 1_000 }
export const MEMORY_SHARE = 0.8

/** Seconds a refused client is told to wait: calls last minutes, but one ending frees room at once. */
export const RETRY_AFTER_S = 5

/**
 * An admitted call counts from its admission until its media opens (`media`), or until it has
 * rung this long without: Twilio gives up ringing after 60 s.
 */
const RING_MS = 60_000
/** An admission whose call was never created (a later refusal: 402, 409) counts this long at most. */
const UNBOUND_MS = 5_000

export interface HeadroomSignals {
  /** Call ids whose media stream is open on this instance. */
  media(): ReadonlySet<string> | ReadonlyMap<string, unknown>
  loopLagMs(): number
  /** Null when no call sent agent audio lately. */
  playoutLeadMs(): number | null
  decoderWaitMs(): number
  rssBytes(): number
}

/** What a call is, for the counts: placed by the API or a campaign, ringing in from a network, or a browser's (the widget's call button). */
export type AdmittedDirection = 'outbound' | 'inbound' | 'web'

export interface Refusal {
  reason: RefusalReason
  message: string
}

export interface Ticket {
  /** The admitted call's id, once it has one. */
  bind(callId: string): void
  /** The call was not created after all. */
  release(): void
}

export class Admission {
  private readonly pending = new Map<object, { at: number; callId: string | null }>()
  readonly admitted = { outbound: 0, inbound: 0, web: 0 }
  readonly refused = new Map<string, number>()

  constructor(
    readonly limits: AdmissionLimits,
    private readonly signals: HeadroomSignals,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Calls this instance carries now: open media streams, and admitted calls still ringing. */
  get liveCalls(): number {
    const media = this.signals.media()
    const now = this.now()
    let ringing = 0
    for (const [key, p] of this.pending) {
      const stale = p.callId ? now - p.at > RING_MS || media.has(p.callId) : now - p.at > UNBOUND_MS
      if (stale) this.pending.delete(key)
      else ringing++
    }
    return media.size + ringing
  }

  /** The call ended (its media may never have opened): it no longer takes room. */
  ended(callId: string): void {
    for (const [key, p] of this.pending) if (p.callId === callId) this.pending.delete(key)
  }

  /** Why the instance cannot take a call now, or null when it can. */
  check(): Refusal | null {
    const l = this.limits
    const calls = this.liveCalls
    if (calls >= l.maxCalls) return { reason: 'calls', message: `${calls} calls are live here, its limit (CALLS_MAX_LIVE ${l.maxCalls})` }
    const lag = this.signals.loopLagMs()
    if (lag > l.maxLoopLagMs) return { reason: 'loop_lag', message: `its event loop is ${lag} ms late (limit ${l.maxLoopLagMs} ms)` }
    const lead = this.signals.playoutLeadMs()
    if (lead !== null && l.minPlayoutLeadMs > 0 && lead < l.minPlayoutLeadMs)
      return { reason: 'playout_lead', message: `live calls' audio is only ${Math.max(0, Math.round(lead))} ms ahead of the line (at least ${l.minPlayoutLeadMs} ms)` }
    const wait = this.signals.decoderWaitMs()
    if (wait > l.maxDecoderWaitMs) return { reason: 'decoder_queue', message: `callers wait ${wait} ms for a speech decoder (limit ${l.maxDecoderWaitMs} ms)` }
    const rss = this.signals.rssBytes()
    if (rss > l.maxRssBytes) return { reason: 'memory', message: `it uses ${mb(rss)} MB of memory (limit ${mb(l.maxRssBytes)} MB)` }
    return null
  }

  /** Takes a call if there is room: a ticket that holds its place until its media opens, or the refusal (counted). */
  admit(direction: AdmittedDirection): Ticket | Refusal {
    const refusal = this.check()
    if (refusal) {
      const key = `${direction}:${refusal.reason}`
      this.refused.set(key, (this.refused.get(key) ?? 0) + 1)
      return refusal
    }
    this.admitted[direction]++
    const key = {}
    this.pending.set(key, { at: this.now(), callId: null })
    return {
      bind: (callId) => {
        const p = this.pending.get(key)
        if (p) p.callId = callId
      },
      release: () => {
        this.pending.delete(key)
        this.admitted[direction]--
      },
    }
  }
}

/** How often a waiting call looks for room: calls last minutes, one ending frees room at once. */
export const ROOM_POLL_MS = 1_000
/** A waiting call waits this long for room at most (then it is failed `not_placed`, saying why): ten minutes of an instance full is an outage to fix, not a wait. */
export const ROOM_WAIT_MS = 10 * 60_000

/** Waits (polling) until the instance has room for an outbound call; the last refusal when it never had. */
export async function waitForRoom(admission: Admission, maxMs = ROOM_WAIT_MS, pollMs = ROOM_POLL_MS): Promise<Ticket | Refusal> {
  const until = performance.now() + maxMs
  for (;;) {
    const r = admission.admit('outbound')
    if (!isRefusal(r) || performance.now() + pollMs > until) return r
    await Bun.sleep(pollMs)
  }
}

export const isRefusal = (r: Ticket | Refusal): r is Refusal => 'reason' in r

/** The 503's message. */
export const atCapacity = (r: Refusal) => `this instance is at capacity: ${r.message}; nothing was placed, retry in ${RETRY_AFTER_S} s`

const mb = (bytes: number) => Math.round(bytes / 1_048_576)

/** What this process may use: its cgroup's limit where one is set, else the machine's memory. */
export function memoryBudget(): number {
  try {
    const raw = readFileSync('/sys/fs/cgroup/memory.max', 'utf8').trim()
    if (/^\d+$/.test(raw)) return Math.min(Number(raw), totalmem())
  } catch {}
  return totalmem()
}
