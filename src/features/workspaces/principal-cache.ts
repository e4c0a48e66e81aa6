/**
 * Authenticated principals by key hash, so a request does not read the key and its workspaces
 * from the store every time. Correctness comes from invalidation, not from the TTL: revoking a
 * key or writing a workspace drops the entries at once on this instance and, through the
 * coordination store's pub/sub, on every other. The TTL only bounds how long a lost pub/sub
 * message (a Redis reconnect) can keep a stale entry alive.
 */
import type { Principal } from '../../kernel/tenancy'

/** A lost invalidation can keep a revoked key working this long on another instance at most. */
export const PRINCIPAL_TTL_MS = 30_000
/** Distinct keys kept; beyond it the oldest entry goes (a busy instance sees far fewer keys). */
export const PRINCIPAL_CACHE_MAX = 10_000

interface Entry {
  principal: Principal
  /** Wall-clock expiry: an operational cache, so real time, not the service clock. */
  expires: number
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>()
  /**
   * Bumped by every invalidation. A principal read from the store is cached only if no
   * invalidation happened since the read began, so a revoke that lands between the read and the
   * write cannot be undone by caching what was read before it.
   */
  private generationCount = 0

  get generation(): number {
    return this.generationCount
  }

  get(hash: string): Principal | undefined {
    const entry = this.entries.get(hash)
    if (!entry) return undefined
    if (entry.expires < Date.now()) {
      this.entries.delete(hash)
      return undefined
    }
    return entry.principal
  }

  /** Caches `principal` unless something was invalidated after `readAt` (a `generation` value). */
  set(hash: string, principal: Principal, readAt: number): void {
    if (readAt !== this.generationCount) return
    if (this.entries.size >= PRINCIPAL_CACHE_MAX) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(hash, { principal, expires: Date.now() + PRINCIPAL_TTL_MS })
  }

  /** Drops the entry of one key (revoked). */
  dropKey(keyId: string): void {
    this.generationCount++
    for (const [hash, e] of this.entries) if (e.principal.key.id === keyId) this.entries.delete(hash)
  }

  /** Drops every entry whose key opens, or is owned by, this workspace (it changed). */
  dropWorkspace(workspaceId: string): void {
    this.generationCount++
    for (const [hash, e] of this.entries) {
      const p = e.principal
      if (p.home.id === workspaceId || p.developer.id === workspaceId) this.entries.delete(hash)
    }
  }

  clear(): void {
    this.generationCount++
    this.entries.clear()
  }
}
