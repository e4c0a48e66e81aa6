/**
 * Actor leases: an instance may hold an actor in memory only while it holds `actor:<kind>:<id>`
 * in the coordination store, so across instances each resource has at most one running actor.
 */
import type { Coordination } from '../src/coordination/port'

// How long a crashed instance's actors stay unreachable before another instance may take them;
// renewed every third of it (see runtime.ts), so two late renewals in a row still keep it.
export const LEASE_TTL_MS = 15_000

const leaseName = (key: string) => `actor:${key}`

export class ActorLeases {
  constructor(
    private readonly coordination: Coordination,
    readonly owner: string,
    readonly ttlMs: number = LEASE_TTL_MS,
  ) {}

  /** Takes or renews the lease; false when another instance holds it. */
  take(key: string): Promise<boolean> {
    return this.coordination.acquireLease(leaseName(key), this.owner, this.ttlMs)
  }

  release(key: string): Promise<void> {
    return this.coordination.releaseLease(leaseName(key), this.owner)
  }

  ownerOf(key: string): Promise<string | null> {
    return this.coordination.leaseOwner(leaseName(key))
  }
}
