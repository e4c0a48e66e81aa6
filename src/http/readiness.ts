/**
 * `GET /ready`: whether this instance can do its work now, for a load balancer's readiness check.
 * `/health` stays liveness (the process answers; 503 only while draining). Readiness also asks
 * the store whether writes go through and coordination whether it answers: 503 with Retry-After
 * while draining or while the store or coordination is unreachable, 507 while the store's disk is
 * full, each naming the cause. Every check is bounded, so the answer comes within READY_CHECK_MS.
 */
import { Elysia } from 'elysia'
import type { Coordination } from '../coordination/port'
import { COMMAND_TIMEOUT_MS } from '../coordination/unavailable'
import type { DocumentStore, StoreHealth } from '../store/port'
import { DRAINING_RETRY_AFTER_S, type DrainState } from './draining-gate'
import { COORDINATION_RETRY_AFTER_S, DISK_FULL_RETRY_AFTER_S } from './outage'

/** The Redis operation bound (coordination/unavailable.ts): a check that takes longer counts as unavailable. */
export const READY_CHECK_MS = COMMAND_TIMEOUT_MS

type Part = 'ok' | 'disk_full' | 'unavailable'

function within<T>(ms: number, what: string, run: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms)
    run().then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

async function storeCheck(store: DocumentStore): Promise<StoreHealth> {
  try {
    return await within(READY_CHECK_MS, 'the store', () => store.health())
  } catch (error) {
    return { ok: false, cause: 'unavailable', message: error instanceof Error ? error.message : String(error) }
  }
}

async function coordinationCheck(coordination: Coordination): Promise<{ ok: true } | { ok: false; message: string }> {
  try {
    await within(READY_CHECK_MS, 'coordination', () => coordination.ping())
    return { ok: true }
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
  }
}

export function readiness(parts: { draining: DrainState; store: DocumentStore; coordination: Coordination }) {
  return new Elysia({ name: 'readiness' }).get(
    '/ready',
    async ({ set }) => {
      if (parts.draining.active) {
        set.status = 503
        set.headers['retry-after'] = String(DRAINING_RETRY_AFTER_S)
        return { ok: false, status: 'draining', cause: 'this instance is shutting down' }
      }
      const [store, coordination] = await Promise.all([storeCheck(parts.store), coordinationCheck(parts.coordination)])
      const state: { store: Part; coordination: Part } = { store: store.ok ? 'ok' : store.cause, coordination: coordination.ok ? 'ok' : 'unavailable' }
      if (store.ok && coordination.ok) return { ok: true, ...state }
      const causes: string[] = []
      if (!store.ok) causes.push(`store (${parts.store.kind}): ${store.message}`)
      if (!coordination.ok) causes.push(`coordination (${parts.coordination.kind}): ${coordination.message}`)
      // A full disk needs an operator; anything else may pass on its own, so it is the shorter wait.
      const diskFull = !store.ok && store.cause === 'disk_full'
      set.status = diskFull ? 507 : 503
      set.headers['retry-after'] = String(diskFull ? DISK_FULL_RETRY_AFTER_S : COORDINATION_RETRY_AFTER_S)
      return { ok: false, status: diskFull ? 'disk_full' : 'unavailable', ...state, cause: causes.join('; ') }
    },
    { detail: { hide: true } },
  )
}
