/**
 * Issuing, listing, revoking and checking API keys. A key value is `sk_` + 32 random characters
 * (160 bits); only its SHA-256 is stored, and its first 11 characters are kept as a prefix so a
 * person can tell keys apart.
 */

import type { Clock } from '../../clock'
import { iso } from '../../clock'
import type { Coordination } from '../../coordination/port'
import { newId, randomId } from '../../ids'
import type { Principal, WorkspaceDoc } from '../../kernel/tenancy'
import { notThere, unrecognised } from '../../refusals'
import type { PageAfter } from '../../store/port'
import type { ApiKeyDoc, ApiKeyRepo, Scope } from './key-repository'
import { PrincipalCache } from './principal-cache'
import type { WorkspaceRepo } from './repository'

/** Pub/sub channel telling every instance to drop cached principals. */
const INVALIDATION_CHANNEL = 'auth.invalidate'

const PREFIX_LENGTH = 11 // `sk_` + 8: enough to tell keys apart, far too little to guess the rest
/** lastUsedAt is written at most this often per key, so reads do not turn into writes (our choice). */
const LAST_USED_GRANULARITY_MS = 60_000

/** SHA-256 hex of a key value: Bun's native hasher, the same digest as node:crypto at a third of the cost per request. */
import { hashKey } from '../../http/authenticator'

export { hashKey }

export interface IssuedKey {
  id: string
  name: string
  prefix: string
  scope: Scope
  key: string
  createdAt: string
}

export class KeyService {
  private readonly cache = new PrincipalCache()
  /** lastUsedAt of a cached key as epoch ms, so a request compares numbers instead of parsing a date. */
  private readonly lastUsed = new WeakMap<ApiKeyDoc, number>()
  private unsubscribe: (() => Promise<void>) | null = null

  constructor(
    private readonly keys: ApiKeyRepo,
    private readonly workspaces: WorkspaceRepo,
    private readonly clock: Clock,
    private readonly coordination?: Coordination,
  ) {}

  /** Listens for invalidations from other instances. */
  async start(): Promise<void> {
    if (!this.coordination || this.unsubscribe) return
    this.unsubscribe = await this.coordination.subscribe(INVALIDATION_CHANNEL, (message) => {
      try {
        const { keyId, workspaceId } = JSON.parse(message) as { keyId?: string; workspaceId?: string }
        if (keyId) this.cache.dropKey(keyId)
        if (workspaceId === '*') this.cache.clear()
        else if (workspaceId) this.cache.dropWorkspace(workspaceId)
      } catch {
        this.cache.clear()
      }
    })
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.()
    this.unsubscribe = null
  }

  /** A workspace changed (plan, status, flags): cached principals that involve it are dropped everywhere. */
  invalidateWorkspace(workspaceId: string): void {
    if (workspaceId === '*') this.cache.clear()
    else this.cache.dropWorkspace(workspaceId)
    this.broadcast({ workspaceId })
  }

  private invalidateKey(keyId: string): void {
    this.cache.dropKey(keyId)
    this.broadcast({ keyId })
  }

  private broadcast(message: { keyId?: string; workspaceId?: string }): void {
    // The local drop already happened; a failed broadcast is bounded by the cache TTL.
    this.coordination?.publish(INVALIDATION_CHANNEL, JSON.stringify(message)).catch(() => {})
  }

  async issue(workspace: WorkspaceDoc, name: string, scope: Scope): Promise<IssuedKey> {
    const value = `sk_${randomId(32)}`
    const doc: ApiKeyDoc = {
      id: newId('key'),
      workspaceId: workspace.id,
      developerId: workspace.parentId ?? workspace.id,
      name,
      prefix: value.slice(0, PREFIX_LENGTH),
      scope,
      hash: hashKey(value),
      lastUsedAt: null,
      revokedAt: null,
      createdAt: iso(this.clock.now()),
    }
    await this.keys.in(workspace.id).insert(doc)
    return { id: doc.id, name, prefix: doc.prefix, scope, key: value, createdAt: doc.createdAt }
  }

  /** Active keys of one workspace, newest first (revoked ones are gone for the caller). */
  /** A page of the workspace's live keys, newest first (store order: createdAt desc, id desc). */
  list(workspaceId: string, limit: number, after: PageAfter | null): Promise<ApiKeyDoc[]> {
    return this.keys.in(workspaceId).page({ revokedAt: null }, limit, after)
  }

  async revoke(workspaceId: string, keyId: string): Promise<void> {
    const keys = this.keys.in(workspaceId)
    const key = await keys.get(keyId)
    if (!key || key.revokedAt) throw notThere(`no key ${keyId} in workspace ${workspaceId}`)
    await keys.update(keyId, { revokedAt: iso(this.clock.now()) })
    this.invalidateKey(keyId)
  }

  /** Every key of a workspace stops working (customer deleted); they are not restored with it. */
  async revokeAll(workspaceId: string): Promise<number> {
    const keys = this.keys.in(workspaceId)
    const active = await keys.find({ revokedAt: null })
    const at = iso(this.clock.now())
    await Promise.all(active.map((k) => keys.update(k.id, { revokedAt: at })))
    for (const k of active) this.invalidateKey(k.id)
    return active.length
  }

  /**
   * The key's principal: at once from the cache (dropped on revoke and on any change to its
   * workspaces, on every instance), else read from the store and cached. Refusals are thrown (401).
   */
  authenticate(authorization: string | undefined | null): Principal | Promise<Principal> {
    const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null
    if (!match) throw unrecognised('missing API key: send Authorization: Bearer <key>')
    const hash = hashKey(match[1])
    const cached = this.cache.get(hash)
    if (cached) {
      this.touch(cached.key)
      return cached
    }
    return this.load(hash)
  }

  private async load(hash: string): Promise<Principal> {
    const readAt = this.cache.generation
    // Authentication: the key says which workspace it is of.
    const key = await this.keys.acrossWorkspaces.findOne({ hash })
    if (!key || key.revokedAt) throw unrecognised('wrong or revoked API key')
    const home = await this.workspaces.get(key.workspaceId)
    if (home?.status !== 'active') throw unrecognised('this key stopped working: its workspace was deleted')
    const developer = home.parentId ? await this.workspaces.get(home.parentId) : home
    if (developer?.status !== 'active') throw unrecognised('wrong or revoked API key')
    const principal = { key, home, developer }
    this.cache.set(hash, principal, readAt)
    this.touch(key)
    return principal
  }

  private touch(key: ApiKeyDoc): void {
    const now = this.clock.now()
    let last = this.lastUsed.get(key)
    if (last === undefined) {
      last = key.lastUsedAt ? Date.parse(key.lastUsedAt) : 0
      this.lastUsed.set(key, last)
    }
    if (now - last < LAST_USED_GRANULARITY_MS) return
    // Also on the cached copy, so the next request does not write again.
    this.lastUsed.set(key, now)
    key.lastUsedAt = iso(now)
    // Fire and forget: a lost lastUsedAt write must never fail the request it describes.
    this.keys.acrossWorkspaces.update(key.id, { lastUsedAt: key.lastUsedAt }).catch(() => {})
  }
}
