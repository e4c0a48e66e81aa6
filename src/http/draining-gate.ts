/**
 * While the instance drains (kernel/draining.ts), `/health` answers 503 `draining` so a load
 * balancer stops sending it traffic, and requests that would start work here are refused with 503
 * and Retry-After, in the surface's error shape, so the client (or a proxy that retries) goes to
 * another instance: writes on the three API surfaces and new WebSocket upgrades (media sockets).
 * Reads are still answered (a live call's status, a stream a widget holds), and so are vendors'
 * callbacks: they report on calls and messages already under way, and most are never resent.
 */
import { Elysia } from 'elysia'
import { unavailable } from '../refusals'
import { VENDOR_CALLBACK_PREFIXES } from './body-limits'

/**
 * A load balancer checks health every 5–30 s and moves on after a failure or two; 5 s is about
 * one interval of a typical one, so most retries find another instance without hammering this one.
 */
export const DRAINING_RETRY_AFTER_S = 5

/**
 * What the gate and readiness read of the instance's drain (kernel/draining.ts `Draining`): HTTP
 * sits below the kernel, so it names the one member it needs instead of importing the class.
 */
export interface DrainState {
  readonly active: boolean
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Whether this request would start work here: a write, or a new WebSocket. */
export function startsWork(request: Request): boolean {
  if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') return true
  if (READS.has(request.method)) return false
  const path = new URL(request.url).pathname
  return !VENDOR_CALLBACK_PREFIXES.some((prefix) => path.startsWith(prefix))
}

export function drainingGate(draining: DrainState) {
  return (
    new Elysia({ name: 'draining-gate' })
      // onRequest hooks apply to every route of the app, mounted before or after.
      .onRequest(({ request }) => {
        if (draining.active && startsWork(request)) {
          throw unavailable('this instance is shutting down; retry, and another instance will take the request', DRAINING_RETRY_AFTER_S)
        }
      })
      .get(
        '/health',
        ({ set }) => {
          if (!draining.active) return { ok: true }
          set.status = 503
          return { ok: false, status: 'draining' }
        },
        { detail: { hide: true } },
      )
  )
}
