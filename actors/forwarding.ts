/**
 * Forwarding an event to the instance that owns the actor (holds its lease), over the
 * coordination pub/sub: a request on the owner's inbox channel, a reply on ours, matched by a
 * correlation id, bounded by a timeout.
 *
 * Order: the sender queues a forward on its own per-actor serial queue and waits for the reply
 * before the next one, and the owner queues each request on its queue in arrival order, so events
 * from one sender reach the actor in the order they were sent.
 */
import type { EventObject } from 'xstate'
import type { Refusal } from '../machines/refusal'
import { type Cancel, type Clock, systemClock } from '../src/clock'
import type { Coordination } from '../src/coordination/port'
import { randomId } from '../src/ids'
import type { Logger } from '../src/logger'
import { ActorUnavailableError, ForwardTimeoutError, fromWire, toWire, type WireError } from './errors'
import type { SnapshotView } from './types'

// A forwarded send is one pub/sub round trip plus one persist on the owner: milliseconds. The
// timeout only elapses when the owner died or stalled (its lease then lapses within
// LEASE_TTL_MS); 5 s stays well under common HTTP client timeouts (30 s), so the caller gets a
// 503 it can retry instead of a hung request.
export const DEFAULT_FORWARD_TIMEOUT_MS = 5_000

export const inboxChannel = (instanceId: string): string => `actors:inbox:${instanceId}`

export interface ForwardRequest {
  kind: string
  id: string
  event: EventObject
  /** How many times this event was already forwarded (bounded by the runtime). */
  hops: number
  /** An ask (ask.ts): the owner answers whether the chart refused this event. */
  judge?: boolean
}

/** The owner's answer: the snapshot it stored, and the refusal this event produced when judged. */
export interface Forwarded {
  view: SnapshotView
  refusal: Refusal | null
}

type Message =
  | ({ t: 'req'; cid: string; from: string } & ForwardRequest)
  | { t: 'res'; cid: string; ok: true; view: SnapshotView; refusal?: Refusal | null }
  | { t: 'res'; cid: string; ok: false; error: WireError }

interface Pending {
  resolve: (answer: Forwarded) => void
  reject: (err: Error) => void
  stopWait: Cancel
}

export interface ForwarderOptions {
  coordination: Coordination
  instanceId: string
  logger: Logger
  timeoutMs?: number
  /** Times the wait for an owner's answer; the system clock unless given (a reply over the network is host time). */
  clock?: Pick<Clock, 'after'>
  /** Processes a request that reached this instance (it queues on the actor's serial queue). */
  handle: (request: ForwardRequest) => Promise<Forwarded>
}

export class Forwarder {
  private readonly pending = new Map<string, Pending>()
  private readonly timeoutMs: number
  private unsubscribe: (() => Promise<void>) | null = null

  constructor(private readonly opts: ForwarderOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS
  }

  async start(): Promise<void> {
    if (this.unsubscribe) return
    this.unsubscribe = await this.opts.coordination.subscribe(inboxChannel(this.opts.instanceId), (m) => this.onMessage(m))
  }

  async stop(): Promise<void> {
    for (const [cid, p] of this.pending) {
      p.stopWait()
      p.reject(new ActorUnavailableError('actor runtime is stopping'))
      this.pending.delete(cid)
    }
    const off = this.unsubscribe
    this.unsubscribe = null
    if (off) await off()
  }

  /** Sends the request to `owner` and resolves with the snapshot after the owner persisted it. */
  request(owner: string, req: ForwardRequest): Promise<Forwarded> {
    const cid = randomId()
    return new Promise<Forwarded>((resolve, reject) => {
      const stopWait = (this.opts.clock ?? systemClock).after(this.timeoutMs, () => {
        this.pending.delete(cid)
        reject(new ForwardTimeoutError(`${req.kind}:${req.id} is owned by ${owner}, which did not answer within ${this.timeoutMs} ms`))
      })
      this.pending.set(cid, { resolve, reject, stopWait })
      const msg: Message = { t: 'req', cid, from: this.opts.instanceId, ...req }
      this.opts.coordination.publish(inboxChannel(owner), JSON.stringify(msg)).catch((err: unknown) => {
        stopWait()
        this.pending.delete(cid)
        reject(err instanceof Error ? err : new Error(String(err)))
      })
    })
  }

  private onMessage(raw: string): void {
    let msg: Message
    try {
      msg = JSON.parse(raw) as Message
    } catch {
      this.opts.logger.warn({ raw: raw.slice(0, 200) }, 'actor forwarding: unparseable message')
      return
    }
    if (msg.t === 'req') {
      // Called synchronously, so requests enter the actor's queue in arrival order.
      void this.answer(msg)
      return
    }
    const p = this.pending.get(msg.cid)
    if (!p) return // answered after our timeout: the caller already got an error
    p.stopWait()
    this.pending.delete(msg.cid)
    if (msg.ok) p.resolve({ view: msg.view, refusal: msg.refusal ?? null })
    else p.reject(fromWire(msg.error))
  }

  private async answer(req: Extract<Message, { t: 'req' }>): Promise<void> {
    let reply: Message
    try {
      const { view, refusal } = await this.opts.handle({ kind: req.kind, id: req.id, event: req.event, hops: req.hops, judge: req.judge })
      reply = { t: 'res', cid: req.cid, ok: true, view, refusal }
    } catch (err) {
      reply = { t: 'res', cid: req.cid, ok: false, error: toWire(err) }
    }
    await this.opts.coordination.publish(inboxChannel(req.from), JSON.stringify(reply)).catch((err: unknown) => {
      this.opts.logger.error({ err, to: req.from }, 'actor forwarding: could not publish a reply')
    })
  }
}
