/**
 * Actors changing instance: a stopping instance drains (claims no more timers, takes no orphaned
 * work, releases each actor once no effect of it is in flight) and says on RELEASED_CHANNEL that
 * it released actors; the others then take over their pending work and due timers at once. Work
 * that no instance holds (at boot, or left by a crashed instance) is taken over the same way.
 */
import type { Residency } from './residency'
import type { SerialQueue } from './serial-queue'
import type { SnapshotStore } from './snapshot-store'
import type { TimerPump } from './timer-pump'
import type { ActorRuntimeOptions, Registration } from './types'

// A stopping instance says so on this channel once it has released leases, so the others take its
// pending work at once instead of at their next orphan sweep (up to ORPHAN_SWEEP_MS later).
const RELEASED_CHANNEL = 'actors:released'
// A crashed instance's leases lapse after LEASE_TTL_MS (15 s); looking for its orphaned pending
// work every 30 s resumes it within about 45 s, for one indexed query when there is none.
export const ORPHAN_SWEEP_MS = 30_000
// Pending actors are resumed this many at a time: enough to overlap store reads, few enough
// that a boot with many in-flight effects does not start them all in one burst.
const RESUME_CONCURRENCY = 32
// While draining, actors that fell idle are handed over this often.
export const DRAIN_SWEEP_MS = 500

export interface HandoverParts extends Pick<ActorRuntimeOptions, 'coordination' | 'instanceId' | 'clock' | 'logger'> {
  kinds: ReadonlyMap<string, Registration>
  queue: SerialQueue
  pump: TimerPump
  /** The runtime's residency; throws while the runtime is stopped. */
  residency: () => Residency
  /** The same, null while the runtime is stopped. */
  held: () => Residency | null
  /** The snapshot store; throws while the runtime is stopped. */
  store: () => SnapshotStore
  registration: (kind: string) => Registration
  /** Passivates every actor without an effect in flight; how many it passivated. */
  passivateAll: () => Promise<number>
  /** Hands over the emitted events stored in outboxes of actors no other instance holds (outbox.ts). */
  deliverOutboxes: () => Promise<void>
}

export class Handover {
  /** Shutting down: no timers or orphaned work taken, actors handed over as they fall idle. */
  draining = false
  private unsubscribe: (() => Promise<void>) | null = null

  constructor(private readonly h: HandoverParts) {}

  /** Starts hearing other instances release actors. */
  async listen(): Promise<void> {
    this.unsubscribe = await this.h.coordination.subscribe(RELEASED_CHANNEL, (from) => this.peerReleased(from))
  }

  async stopListening(): Promise<void> {
    await this.unsubscribe?.()
  }

  /** See ActorRuntime.drain. */
  async drain(): Promise<void> {
    if (this.draining || !this.h.held()) return
    this.draining = true
    await this.h.pump.stop()
    await this.handOverIdle()
  }

  /** See ActorRuntime.handOver. */
  async handOver(kind: string): Promise<number> {
    this.h.registration(kind)
    const residency = this.h.residency()
    const held = residency.all().filter((l) => l.kind === kind)
    await Promise.all(held.map((l) => this.h.queue.run(l.key, async () => void (residency.get(l.key) === l && (await residency.drop(l))))))
    if (held.length > 0) await this.announceReleased()
    return held.length
  }

  /** Actors busy right now (an effect in flight) in this process. */
  get busyCount(): number {
    const held = this.h.held()
    return held?.all().filter((l) => l.busy()).length ?? 0
  }

  async handOverIdle(): Promise<number> {
    const handed = await this.h.passivateAll()
    if (handed > 0) await this.announceReleased()
    return handed
  }

  async announceReleased(): Promise<void> {
    await this.h.coordination.publish(RELEASED_CHANNEL, this.h.instanceId).catch((err: unknown) => this.h.logger.warn({ err }, 'could not tell the other instances that actors were released'))
  }

  /**
   * Resumes stored actors with pending work that no instance holds: at boot, and periodically for
   * the ones a crashed instance left behind once its leases lapse. Returns how many it resumed.
   * Their stored emitted events go first: resuming an actor does not hand its outbox over (only a
   * change of it would), and a finished one is never resumed, so without this an event a crashed
   * instance stored and had not handed over (its publish waiting on Redis) waited for the next boot.
   */
  async resumePending(): Promise<number> {
    if (this.draining) return 0
    await this.h.deliverOutboxes()
    const residency = this.h.residency()
    let resumed = 0
    for (const reg of this.h.kinds.values()) {
      const pending = (await this.h.store().pending(reg.kind)).filter((doc) => !residency.get(doc.id))
      for (let i = 0; i < pending.length; i += RESUME_CONCURRENCY) {
        const batch = pending.slice(i, i + RESUME_CONCURRENCY).map(async (doc) => {
          try {
            const target = await this.h.queue.run(doc.id, () => residency.acquire(reg, doc.resourceId, doc.id, undefined))
            return target.type === 'live'
          } catch (err) {
            this.h.logger.warn({ err, actor: doc.id }, 'actor with pending work not resumed')
            return false
          }
        })
        resumed += (await Promise.all(batch)).filter(Boolean).length
      }
    }
    return resumed
  }

  /** Another instance released actors: take its pending work and due timers now. */
  private peerReleased(from: string): void {
    if (from === this.h.instanceId || this.draining || !this.h.held()) return
    void this.resumePending().catch((err: unknown) => this.h.logger.warn({ err }, 'could not resume work another instance released'))
    this.h.pump.nudge(this.h.clock.now())
  }
}
