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
  /** Owed ids by key: one alone (most keys), else several in the order they were added. */
  private readonly byKey = new Map<string, string | string[]>()
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
    const had = this.byKey.get(key)
    if (had === undefined) this.byKey.set(key, id)
    else if (typeof had === 'string') {
      if (had !== id) this.byKey.set(key, [had, id])
    } else if (!had.includes(id)) had.push(id)
  }

  /** Done, or never recorded (its commit failed). */
  delete(id: string, key: string): void {
    const had = this.byKey.get(key)
    if (had === id) this.byKey.delete(key)
    else if (Array.isArray(had)) {
      const left = had.filter((other) => other !== id)
      if (left.length === 1) this.byKey.set(key, left[0]!)
      else this.byKey.set(key, left)
    }
  }

  has(id: string, key: string): boolean {
    const had = this.byKey.get(key)
    return had === id || (Array.isArray(had) && had.includes(id))
  }

  /** The deliveries owed under `key`, in the order they were added. */
  under(key: string): string[] {
    const had = this.byKey.get(key)
    return had === undefined ? [] : typeof had === 'string' ? [had] : [...had]
  }
}
