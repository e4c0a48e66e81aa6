/**
 * `Idempotency-Key` for endpoints that send or create something (docs/spec.md Conventions rule 6):
 * a repeat returns the first answer with `Idempotent-Replayed: true`; a repeat while the first is
 * still running gets 409; a server-side failure (5xx) releases the key so the caller may retry with
 * it, also when coordination could not be reached to release it then (claim-releases.ts).
 * Keys are scoped to the workspace and the route, and bound to the request body: the same key
 * with a different body is refused rather than silently replaying an unrelated answer.
 */
import { createHash } from 'node:crypto'
import type { Coordination, StoredResponse } from '../coordination/port'
import { randomId } from '../ids'
import { clashes, invalid } from '../refusals'
import { outageRefusal } from './outage'
import { apiErrorOf } from './refusals'

/** docs/spec.md Limits: idempotency key retention 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/**
 * How long a request may hold its key before it counts as abandoned: far longer than any request
 * we serve (a knowledge page fetch gives up after 10 s, a model call after 20 s), short enough
 * that a process dying mid-request does not block a retry with the same key for a day.
 */
export const IN_FLIGHT_TTL_MS = 120_000
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/ // printable ASCII, as Stripe and most providers accept

export interface Answer {
  status: number
  body: unknown
}

export interface IdempotentResult extends Answer {
  replayed: boolean
}

/** What `beginIdempotent` found: no key, an answer to replay, or a claim this request now holds. */
export type IdempotencyStep = { kind: 'none' } | { kind: 'replay'; status: number; body: unknown } | { kind: 'claimed'; id: string; owner: string; fingerprint: string }
type Claim = Extract<IdempotencyStep, { kind: 'claimed' }>

/** Where a request's key came from, named as the caller sent it (400s name it). */
export const KEY_HEADER = 'Idempotency-Key'

export interface RequestKey {
  key: string | undefined
  /** `Idempotency-Key`, or the body member it was read from. */
  field: string
  /** The body the key is bound to: without the body member, which is the key, not the request. */
  body: unknown
}

/**
 * The key of a request: the header, else the body member `bodyKey` (a route that takes one). The
 * body member is never part of the request the key is bound to, so a repeat that differs only in
 * it (the header having won) is the same request.
 */
export function requestKey(header: string | null, body: unknown, bodyKey?: string): RequestKey {
  let rest = body
  let fromBody: unknown
  if (bodyKey !== undefined && body !== null && typeof body === 'object' && !Array.isArray(body) && bodyKey in body) {
    const { [bodyKey]: member, ...others } = body as Record<string, unknown>
    fromBody = member
    rest = others
  }
  if (header !== null) return { key: header, field: KEY_HEADER, body: rest }
  if (typeof fromBody === 'string') return { key: fromBody, field: bodyKey!, body: rest }
  return { key: undefined, field: KEY_HEADER, body: rest }
}

/** Claims `key` for this request (or finds its stored answer); 409 while in flight, 400 for another body. */
export async function beginIdempotent(coordination: Coordination, scope: string, key: string | undefined | null, requestBody: unknown, field = KEY_HEADER): Promise<IdempotencyStep> {
  if (key === undefined || key === null || key === '') return { kind: 'none' }
  if (!KEY_SHAPE.test(key)) throw invalid(field, 'must be 1–255 printable characters')
  const fingerprint = createHash('sha256')
    .update(JSON.stringify(requestBody ?? null))
    .digest('hex')
  const id = `idem:${scope}:${key}`
  const owner = randomId()
  let begun: Awaited<ReturnType<Coordination['idempotencyBegin']>>
  try {
    begun = await coordination.idempotencyBegin(id, IN_FLIGHT_TTL_MS, owner)
  } catch (error) {
    // The claim may have been written with its answer lost (Redis stalled past the bound): this
    // request answers 503, so the claim goes once coordination answers again. Not awaited: the
    // request has waited out the bound already, and the release is queued behind the claim.
    void coordination.idempotencyRelease(id, owner).catch(() => {})
    throw error
  }
  if (begun.state === 'in_flight') throw clashes(`a request with this ${field} is still being processed`)
  if (begun.state === 'done') {
    const stored = begun.response
    if (stored.headers?.fingerprint !== fingerprint) {
      throw invalid(field, 'was already used with a different request body')
    }
    return { kind: 'replay', status: stored.status, body: stored.body }
  }
  return { kind: 'claimed', id, owner, fingerprint }
}

/** The handler answered: its answer is kept for the key, except a server-side failure (5xx), which releases it. */
export async function answerIdempotent(coordination: Coordination, claim: Claim, answer: Answer): Promise<void> {
  if (answer.status >= 500) return coordination.idempotencyRelease(claim.id, claim.owner)
  const stored: StoredResponse = { status: answer.status, body: answer.body, headers: { fingerprint: claim.fingerprint } }
  await coordination.idempotencyComplete(claim.id, stored, IDEMPOTENCY_TTL_MS)
}

/**
 * The handler threw. A refusal is an answer too (the same request would be refused again), except
 * rate limits, server-side failures (5xx: providers, outages, our own crashes), which release the
 * key for a retry. After a coordination outage the release is not waited for: Redis is not
 * answering, so waiting would only hold the 503 another bound while the release keeps trying.
 */
export async function failIdempotent(coordination: Coordination, claim: Claim, error: unknown): Promise<void> {
  const refused = apiErrorOf(error)
  if (refused && refused.status < 500 && refused.status !== 429) {
    const body = { error: refused.message, ...(refused.extra ?? {}) }
    await coordination.idempotencyComplete(claim.id, { status: refused.status, body, headers: { fingerprint: claim.fingerprint } }, IDEMPOTENCY_TTL_MS)
    return
  }
  const released = coordination.idempotencyRelease(claim.id, claim.owner)
  if (outageRefusal(error)?.status === 503) return void released.catch(() => {})
  await released
}

/**
 * Claims held by requests whose handler has not answered yet. A handler that throws never reaches
 * the route's own hooks after the kernel's error plugin has shaped the answer, so the error plugin
 * settles the claim (`settleFailedClaim`) before it answers.
 */
const held = new WeakMap<Request, (error: unknown) => Promise<void>>()

export function holdClaim(request: Request, onError: (error: unknown) => Promise<void>): void {
  held.set(request, onError)
}

export function releaseHold(request: Request): void {
  held.delete(request)
}

/** Called by the error plugin for every failed request: a held claim is stored as the refusal or released. */
export async function settleFailedClaim(request: Request, error: unknown): Promise<void> {
  const settle = held.get(request)
  if (!settle) return
  held.delete(request)
  await settle(error)
}

/** The three steps around one piece of work (services and tests; routes declare `idempotent` instead). */
export async function idempotent(coordination: Coordination, scope: string, key: string | undefined | null, requestBody: unknown, run: () => Promise<Answer>): Promise<IdempotentResult> {
  const step = await beginIdempotent(coordination, scope, key, requestBody)
  if (step.kind === 'none') return { ...(await run()), replayed: false }
  if (step.kind === 'replay') return { status: step.status, body: step.body, replayed: true }
  let answer: Answer
  try {
    answer = await run()
  } catch (error) {
    await failIdempotent(coordination, step, error)
    throw error
  }
  await answerIdempotent(coordination, step, answer)
  return { ...answer, replayed: false }
}

/** Applies an idempotent result to Elysia's `set`, marking replays. */
export function applyResult(set: { status?: number | string; headers: Record<string, unknown> }, result: IdempotentResult): unknown {
  set.status = result.status
  if (result.replayed) set.headers['idempotent-replayed'] = 'true'
  return result.body
}
