/**
 * The v1 deliveries this instance owes that wait their turn (subject-turns.ts), by key (webhook
 * and subject): what a new delivery of a key goes out after, without asking the store.
 *
 * It holds every such delivery in the store only where nothing else writes them: the embedded
 * store held by this process alone (SQLITE_LOCKING=exclusive), once the boot's takeover has made
 * every delivery an earlier life owed this instance's (`whole`). Until then, and always on MongoDB,
 * a shared SQLite file or beside a live owner elsewhere, the store is asked as before.
 */
export class OwedKeys {
  private readonly byKey = new Map<string, Set<string>>()
  private readonly keyOf = new Map<string, string>()
  private complete = false

  /** Whether every owed delivery with a key is here. */
  get whole(): boolean {
    return this.complete
  }

  /** Set once the store holds no delivery another instance (or an earlier life) owes, and none can appear. */
  markWhole(): void {
    this.complete = true
  }

  /** Owed from the moment its dispatch computes it (before its commit, so a later event of the key waits for it). */
  add(id: string, key: string): void {
    if (this.keyOf.has(id)) return
    this.keyOf.set(id, key)
    let ids = this.byKey.get(key)
    if (!ids) {
      ids = new Set()
      this.byKey.set(key, ids)
    }
    ids.add(id)
  }

  /** Done, or never recorded (its commit failed). */
  delete(id: string): void {
    const key = this.keyOf.get(id)
    if (key === undefined) return
    this.keyOf.delete(id)
    const ids = this.byKey.get(key)
    ids?.delete(id)
    if (ids?.size === 0) this.byKey.delete(key)
  }

  has(id: string): boolean {
    return this.keyOf.has(id)
  }

  /** The deliveries owed under `key`, in the order they were added. */
  under(key: string): string[] {
    const ids = this.byKey.get(key)
    return ids ? [...ids] : []
  }
}
