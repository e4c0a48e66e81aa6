/**
 * Customer workspace (docs/spec.md "Customer workspace"): active → deleted (archived) → erased,
 * with restore from deleted. Each docs/spec.md row passes through one short effect state:
 *
 *   active  --customer.delete [holds no numbers]--> archiving --archiveCustomer done--> deleted
 *   deleted --timer.due [eraseAt passed]----------> erasing   --eraseCustomer done---> erased
 *   deleted --customer.restore--------------------> restoring --restoreCustomer done--> active
 *
 * Effects (docs/design.md "Machines and actors"): the I/O is three invoked actors named here and bound
 * to the real work in the customers feature's actor.ts. They get effect states of their own because
 * no other move may interleave with a half-applied effect: a restore accepted while the archive
 * is still being written would be overwritten by it. Every effect is idempotent (a crash
 * mid-effect re-runs it when the runtime resumes the actor at boot).
 *
 * Effect failure: the error is recorded in `lastError` and the effect re-runs at `retryAt`, a
 * durable deadline (`retry`) woken by `timer.due` like the erasure. Not an XState `after`: a
 * failed effect leaves no running child in the snapshot, so nothing at boot would resume it, and
 * XState drops `after` timers from persisted snapshots.
 *
 * The 30-day erasure is a durable deadline too: `eraseAt` in context, woken by the runtime's timer
 * with `timer.due`; the guard `event.at >= eraseAt` makes an early, stale (from before a restore)
 * or repeated wake-up do nothing.
 *
 * Not shown in docs/spec.md, chosen here:
 * - DELETE of a customer that is not active, and restore of one that is not deleted, are refused
 *   naming the state (the HTTP layer answers 409); so are moves during an effect state.
 * - The DELETE event carries the numbers the workspace still holds (phone numbers and connected
 *   messaging numbers); the refusal message names them.
 * - "A call in progress finishes": the archive effect does nothing to live calls.
 * - Restore cancels the erasure deadline and restores only the workspace: campaigns stay
 *   cancelled, old keys stay revoked, webhooks stay off until PATCHed back on.
 * - `erased` is not a final state, so later moves are still refused with a message (an XState
 *   final state would silently drop them).
 */
import { assign, fromPromise, type SnapshotFrom, setup } from 'xstate'
import { type CanApply, canApplyOn, type Refusal, type RefusalParams, refusalOf } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. 2: effect states, retries. */
export const MACHINE_VERSION = 2

/** docs/spec.md Limits: erasure delay after customer delete. */
export const ERASE_AFTER_MS = 30 * 24 * 60 * 60 * 1000

// Effect retries (our choice; docs/spec.md is silent). The effects are a few store writes and the
// hooks of other features, so a failure means a store or a subscriber is down: 30 s lets a blip
// pass without hammering it, doubling per failure up to 15 min keeps a long outage at four
// tries an hour, and a customer's delete still lands within minutes of the store coming back.
export const EFFECT_RETRY_FIRST_MS = 30_000
export const EFFECT_RETRY_MAX_MS = 15 * 60_000

/** Wait before retry number `attempts` (1 = after the first failure). */
export const retryDelay = (attempts: number): number => Math.min(EFFECT_RETRY_FIRST_MS * 2 ** Math.max(0, attempts - 1), EFFECT_RETRY_MAX_MS)

export type CustomerWorkspaceState = 'active' | 'archiving' | 'deleted' | 'restoring' | 'erasing' | 'erased'

/** Invoked effects; implemented in the customers feature's actor.ts with `machine.provide({ actors })`. */
export const CUSTOMER_WORKSPACE_EFFECTS = ['archiveCustomer', 'restoreCustomer', 'eraseCustomer'] as const
export type CustomerWorkspaceEffect = (typeof CUSTOMER_WORKSPACE_EFFECTS)[number]

/** States in which an effect runs (or waits for its retry). */
export const EFFECT_STATES = ['archiving', 'restoring', 'erasing'] as const satisfies readonly CustomerWorkspaceState[]

export interface EffectFailure {
  effect: CustomerWorkspaceEffect
  message: string
  /** When it failed (service clock). */
  at: number
  /** Failures of this effect in a row. */
  attempts: number
}

export interface CustomerWorkspaceContext {
  id: string
  /** The developer workspace that owns it (handed to lifecycle hooks). */
  developerId: string | null
  archivedAt: number | null
  /** The durable erasure deadline (API field `eraseAfter`). */
  eraseAt: number | null
  restoredAt: number | null
  erasedAt: number | null
  /** The last effect failure, until that effect succeeds. */
  lastError: EffectFailure | null
  /** When the failed effect runs again (durable deadline `retry`). */
  retryAt: number | null
  lastRefusal: Refusal | null
}

export interface CustomerWorkspaceInput {
  id: string
  developerId?: string | null
}

export type CustomerWorkspaceEvent =
  /** DELETE customer; `heldNumbers` are the phone and connected messaging numbers it still holds. */
  | { type: 'customer.delete'; at: number; heldNumbers: string[] }
  | { type: 'customer.restore'; at: number }
  /** A durable deadline (`erase` or `retry`) fell due; `at` is the delivery instant. */
  | { type: 'timer.due'; at: number; name?: string }

/** What each effect is given (plain JSON: it is persisted with a running child and re-run from it). */
export interface ArchiveInput {
  id: string
  developerId: string | null
  archivedAt: number
  eraseAt: number
}
export interface RestoreInput {
  id: string
  developerId: string | null
  restoredAt: number
}
export interface EraseInput {
  id: string
  developerId: string | null
  erasedAt: number
}

const unbound = (name: CustomerWorkspaceEffect) => async (): Promise<void> => {
  throw new Error(`${name} is provided by the customers binding`)
}

const held = (event: CustomerWorkspaceEvent): string[] => (event.type === 'customer.delete' && Array.isArray(event.heldNumbers) ? event.heldNumbers : [])

const refuse = (state: CustomerWorkspaceState, message: string) => ({
  actions: { type: 'recordRefusal' as const, params: { state, message } },
})

/** The instant an effect state was entered: the fallback base of a retry when a failure has no time. */
const startedAt = (c: CustomerWorkspaceContext, effect: CustomerWorkspaceEffect): number =>
  (effect === 'archiveCustomer' ? c.archivedAt : effect === 'restoreCustomer' ? c.restoredAt : c.erasedAt) ?? 0

/** An effect's rejection as plain data; the binding rejects with `{ message, at }` (EffectError). */
function failureOf(error: unknown): { message: string; at: number | null } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; at?: unknown }
  return { message: typeof e.message === 'string' ? e.message : String(error), at: typeof e.at === 'number' ? e.at : null }
}

const retryOnDue = (state: (typeof EFFECT_STATES)[number]) => ({
  guard: 'retryDue' as const,
  target: state,
  reenter: true,
  actions: 'clearRetry' as const,
})

export const customerWorkspaceMachine = setup({
  types: {
    context: {} as CustomerWorkspaceContext,
    events: {} as CustomerWorkspaceEvent,
    input: {} as CustomerWorkspaceInput,
  },
  actors: {
    archiveCustomer: fromPromise<void, ArchiveInput>(unbound('archiveCustomer')),
    restoreCustomer: fromPromise<void, RestoreInput>(unbound('restoreCustomer')),
    eraseCustomer: fromPromise<void, EraseInput>(unbound('eraseCustomer')),
  },
  actions: {
    archive: assign({
      archivedAt: ({ event }) => event.at,
      eraseAt: ({ event }) => event.at + ERASE_AFTER_MS,
      restoredAt: () => null,
    }),
    unarchive: assign({ archivedAt: () => null, eraseAt: () => null, restoredAt: ({ event }) => event.at }),
    markErased: assign({ erasedAt: ({ event }) => event.at }),
    recordFailure: assign(({ context, event }, params: { effect: CustomerWorkspaceEffect }) => {
      const { message, at } = failureOf((event as { error?: unknown }).error)
      const attempts = context.lastError?.effect === params.effect ? context.lastError.attempts + 1 : 1
      const failedAt = at ?? startedAt(context, params.effect)
      return { lastError: { effect: params.effect, message, at: failedAt, attempts }, retryAt: failedAt + retryDelay(attempts) }
    }),
    clearRetry: assign({ retryAt: () => null }),
    clearFailure: assign({ lastError: () => null, retryAt: () => null }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    holdsNoNumbers: ({ event }) => held(event).length === 0,
    erasureDue: ({ context, event }) => context.eraseAt !== null && typeof event.at === 'number' && event.at >= context.eraseAt,
    retryDue: ({ context, event }) => context.retryAt !== null && typeof event.at === 'number' && event.at >= context.retryAt,
  },
}).createMachine({
  id: 'customerWorkspace',
  description: "A developer's customer workspace: live, archived for 30 days, then erased.",
  context: ({ input }) => ({
    id: input.id,
    developerId: input.developerId ?? null,
    archivedAt: null,
    eraseAt: null,
    restoredAt: null,
    erasedAt: null,
    lastError: null,
    retryAt: null,
    lastRefusal: null,
  }),
  initial: 'active',
  states: {
    active: {
      description: 'In use: requests with its Service-Workspace header run inside it.',
      on: {
        'customer.delete': [
          { guard: 'holdsNoNumbers', target: 'archiving', actions: 'archive' },
          {
            actions: {
              type: 'recordRefusal',
              params: ({ event }) => ({
                state: 'active',
                message: `customer is active and still holds ${held(event).join(', ')}; release them before deleting it`,
              }),
            },
          },
        ],
        'customer.restore': refuse('active', 'customer is active; only a deleted customer can be restored'),
      },
    },
    archiving: {
      description:
        'Applying the delete: workspace archived (requests answer 410, eraseAfter set), every key revoked, ' +
        'onDeleted hooks fired (webhooks off, campaigns cancelled, sequences and callbacks stopped). Retried at retryAt on failure.',
      invoke: {
        src: 'archiveCustomer',
        input: ({ context }) => ({ id: context.id, developerId: context.developerId, archivedAt: context.archivedAt ?? 0, eraseAt: context.eraseAt ?? 0 }),
        onDone: { target: 'deleted', actions: 'clearFailure' },
        onError: { actions: { type: 'recordFailure', params: { effect: 'archiveCustomer' } } },
      },
      on: {
        'timer.due': retryOnDue('archiving'),
        'customer.delete': refuse('archiving', 'customer is archiving: its delete is being applied already'),
        'customer.restore': refuse('archiving', 'customer is archiving: restore it once the delete is applied'),
      },
    },
    deleted: {
      description: 'Archived: requests into it answer 410; erased when eraseAt passes unless restored.',
      on: {
        'customer.restore': { target: 'restoring', actions: 'unarchive' },
        'timer.due': { guard: 'erasureDue', target: 'erasing', actions: 'markErased' },
        'customer.delete': refuse('deleted', 'customer is deleted already'),
      },
    },
    restoring: {
      description: 'Applying the restore: workspace active again, onRestored hooks fired; keys and campaigns stay as they are.',
      invoke: {
        src: 'restoreCustomer',
        input: ({ context }) => ({ id: context.id, developerId: context.developerId, restoredAt: context.restoredAt ?? 0 }),
        onDone: { target: 'active', actions: 'clearFailure' },
        onError: { actions: { type: 'recordFailure', params: { effect: 'restoreCustomer' } } },
      },
      on: {
        'timer.due': retryOnDue('restoring'),
        'customer.delete': refuse('restoring', 'customer is restoring: delete it once the restore is applied'),
        'customer.restore': refuse('restoring', 'customer is restoring already'),
      },
    },
    erasing: {
      description: 'Erasing every conversation, contact, recording and file, then the workspace itself. Retried at retryAt on failure.',
      invoke: {
        src: 'eraseCustomer',
        input: ({ context }) => ({ id: context.id, developerId: context.developerId, erasedAt: context.erasedAt ?? 0 }),
        onDone: { target: 'erased', actions: 'clearFailure' },
        onError: { actions: { type: 'recordFailure', params: { effect: 'eraseCustomer' } } },
      },
      on: {
        'timer.due': retryOnDue('erasing'),
        'customer.delete': refuse('erasing', 'customer is erasing already'),
        'customer.restore': refuse('erasing', 'customer is erasing; it can no longer be restored'),
      },
    },
    erased: {
      description: 'Every conversation, contact, recording and file is gone; nothing can bring it back.',
      on: {
        'customer.delete': refuse('erased', 'customer is erased already'),
        'customer.restore': refuse('erased', 'customer is erased; it can no longer be restored'),
      },
    },
  },
})

export type CustomerWorkspaceSnapshot = SnapshotFrom<typeof customerWorkspaceMachine>

/** The durable deadlines a snapshot waits for: the erasure while deleted, an effect's retry. */
export function customerWorkspaceDeadlines(snap: CustomerWorkspaceSnapshot): { name: string; at: number }[] {
  const out: { name: string; at: number }[] = []
  if (snap.value === 'deleted' && snap.context.eraseAt !== null) out.push({ name: 'erase', at: snap.context.eraseAt })
  if (snap.context.retryAt !== null) out.push({ name: 'retry', at: snap.context.retryAt })
  return out
}

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(target: CustomerWorkspaceSnapshot | CustomerWorkspaceState, event: CustomerWorkspaceEvent | CustomerWorkspaceEvent['type']): CanApply {
  return canApplyOn(customerWorkspaceMachine, target, event)
}
