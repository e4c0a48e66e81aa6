/**
 * Work an instance owes after a commit it made, kept in the store until it is done, so neither a
 * kill -9 nor an instance's death loses it: a webhook delivery owed for a dispatched event, an
 * agent's answer owed to a stored customer message.
 *
 * Each item carries its `owner`, the instance that committed it and runs it from memory. Every
 * instance registers itself (`<name>_owners`) and holds a presence lease while it lives; every
 * EVERY_MS each instance looks for registered owners whose lease lapsed, takes the dead owner's
 * lease (so only one survivor does), makes each of its items its own and hands it to `resume`. A
 * restarted process is a new instance: its previous life's items are taken over at its start (at
 * once with the in-process coordination store, whose leases die with the process; within
 * PRESENCE_TTL_MS on Redis). An instance that stops cleanly releases its lease, so what it still
 * owed is taken over at once.
 *
 * The owner writes the item in the same store commit as the fact that owes it (`owe` returns that
 * write), then starts the work; `done` removes it. Work taken over may have been under way when its
 * owner died, so `resume` must tolerate a repeat (the callers say how: at least once, or a stage
 * written before each step that cannot be repeated).
 */
import type { Coordination } from '../coordination/port'
import type { Logger } from '../logger'
import type { Collection, Doc, DocumentStore, IndexSpec, Write } from '../store/port'

/**
 * A dead instance's work is taken over this long after its last renewal, at most: the actor
 * leases' 15 s (actors/leases.ts) and a margin for a store stall, as the sandbox switches' 20 s.
 */
export const PRESENCE_TTL_MS = 20_000
/** Renewed and looked at this often: three late renewals in a row still keep an instance alive. */
const EVERY_MS = 5_000
/** Items taken over per read: a bounded read per round however much a dead instance owed. */
const TAKEOVER_BATCH = 200

export interface OwedItem extends Doc {
  owner: string
}

interface OwnerDoc {
  [field: string]: unknown
  id: string
  startedAt: number
}

export interface OwedWorkOptions<T extends OwedItem> {
  /** The items' collection; the registry is `<name>_owners`. */
  name: string
  /** This instance. */
  owner: string
  coordination: Coordination
  logger: Logger
  /** Indexes the items' own lookups need, beside the one on `owner`. */
  indexes?: IndexSpec[]
  /** Starts an item taken over from a dead instance (already this instance's); should not wait for the whole work. */
  resume: (item: T) => void | Promise<void>
}

export class OwedWork<T extends OwedItem> {
  private timer: ReturnType<typeof setTimeout> | null = null
  private round: Promise<void> | null = null
  private taking = true

  private constructor(
    readonly items: Collection<T>,
    private readonly owners: Collection<OwnerDoc>,
    private readonly o: OwedWorkOptions<T>,
  ) {}

  /** Opens the collections and registers this instance (before it owes anything, so a death at any later point is seen). */
  static async open<T extends OwedItem>(store: DocumentStore, o: OwedWorkOptions<T>): Promise<OwedWork<T>> {
    const items = await store.collection<T>({ name: o.name, indexes: [{ name: 'owner', fields: [['owner', 1]] }, ...(o.indexes ?? [])] })
    const owners = await store.collection<OwnerDoc>({ name: `${o.name}_owners`, indexes: [] })
    await o.coordination.acquireLease(leaseName(o.name, o.owner), o.owner, PRESENCE_TTL_MS)
    await owners.upsert({ id: o.owner, startedAt: Date.now() })
    return new OwedWork(items, owners, o)
  }

  /** The write that records `item` as this instance's, for the caller's commit. */
  owe(item: Omit<T, 'owner'>): Write {
    return { collection: this.items.name, op: 'upsert', doc: { ...item, owner: this.o.owner } as T }
  }

  /** A step of an item, written before the step it names (the caller's commit may carry it instead). */
  stage(id: string, set: Record<string, unknown>): Write {
    return { collection: this.items.name, op: 'update', id, set }
  }

  update(id: string, set: Record<string, unknown>): Promise<T | null> {
    return this.items.update(id, set)
  }

  async done(id: string): Promise<void> {
    await this.items.delete(id)
  }

  /** Takes over what earlier lives of this service and dead instances owed, then keeps looking. */
  async start(): Promise<void> {
    await this.sweep()
    this.plan()
  }

  /** Draining: this instance takes no more of others' work (it still renews its own presence). */
  drain(): void {
    this.taking = false
  }

  /** Stops looking and lets go of the presence lease: what is still owed is taken over by the others (or by the next start). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.round
    const { coordination, owner } = this.o
    if ((await this.items.count({ owner })) === 0) await this.owners.delete(owner).catch(() => false)
    await coordination.releaseLease(leaseName(this.o.name, owner), owner).catch(() => {})
  }

  /** One round: renew this instance's presence, then take over every dead owner's items. Returns how many were taken. */
  async sweep(): Promise<number> {
    const { coordination, owner, logger, name } = this.o
    if (!(await coordination.acquireLease(leaseName(name, owner), owner, PRESENCE_TTL_MS)))
      logger.error({ owner, work: name }, 'presence lease lost: another instance took this one for dead and runs what it owed')
    if (!this.taking) return 0
    let taken = 0
    for (const dead of await this.owners.find({})) {
      if (dead.id === owner || (await coordination.leaseOwner(leaseName(name, dead.id))) !== null) continue
      if (!(await coordination.acquireLease(leaseName(name, dead.id), owner, PRESENCE_TTL_MS))) continue
      try {
        for (;;) {
          const batch = await this.items.find({ owner: dead.id }, { limit: TAKEOVER_BATCH })
          if (batch.length === 0) break
          for (const item of batch) {
            const mine = await this.items.update(item.id, { owner })
            if (!mine) continue
            taken++
            await this.resume(mine)
          }
        }
        await this.owners.delete(dead.id)
      } finally {
        await coordination.releaseLease(leaseName(name, dead.id), owner).catch(() => {})
      }
      if (taken) logger.info({ work: name, from: dead.id, taken }, 'took over work a stopped instance owed')
    }
    return taken
  }

  private async resume(item: T): Promise<void> {
    try {
      await this.o.resume(item)
    } catch (err) {
      this.o.logger.error({ err, work: this.o.name, item: item.id }, 'could not resume owed work')
    }
  }

  private plan(): void {
    this.timer = setTimeout(() => {
      this.round = this.sweep()
        .then(
          () => {},
          (err: unknown) => this.o.logger.warn({ err, work: this.o.name }, 'could not look for work stopped instances owed'),
        )
        .finally(() => {
          this.round = null
          if (this.timer) this.plan()
        })
    }, EVERY_MS)
    this.timer.unref?.()
  }
}

const leaseName = (work: string, owner: string) => `owed:${work}:${owner}`
