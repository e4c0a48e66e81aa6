/**
 * Customer workspace (SPEC.md "Customer workspace"): active → deleted (archived) → erased,
 * with restore from deleted.
 *
 * The 30-day erasure is a durable deadline: `eraseAt` in context, woken by the runtime's timer
 * with `timer.due`; the guard `event.at >= eraseAt` makes an early, stale (from before a restore)
 * or repeated wake-up do nothing.
 *
 * Not shown in SPEC.md, chosen here:
 * - DELETE of an already deleted or erased customer is refused (the HTTP layer answers 410 with
 *   archivedAt and eraseAfter); restore of an active or erased customer is refused.
 * - The DELETE event carries the numbers the workspace still holds (phone numbers and connected
 *   messaging numbers); the refusal message names them.
 * - "A call in progress finishes": no effect is fired for live calls on delete.
 * - Restore cancels the erasure timer and fires nothing else: campaigns stay cancelled, old keys
 *   stay revoked, webhooks stay off until PATCHed back on.
 * - `erased` is not a final state, so later moves are still refused with a message (an XState
 *   final state would silently drop them).
 */
import { assign, setup, type SnapshotFrom } from 'xstate'
import { canApplyOn, refusalOf, type CanApply, type Refusal, type RefusalParams } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
export const MACHINE_VERSION = 1

/** SPEC.md Limits: erasure delay after customer delete. */
export const ERASE_AFTER_MS = 30 * 24 * 60 * 60 * 1000

export type CustomerWorkspaceState = 'active' | 'deleted' | 'erased'

export interface CustomerWorkspaceContext {
  id: string
  archivedAt: number | null
  /** The durable erasure deadline (API field `eraseAfter`). */
  eraseAt: number | null
  erasedAt: number | null
  lastRefusal: Refusal | null
}

export interface CustomerWorkspaceInput {
  id: string
}

export type CustomerWorkspaceEvent =
  /** DELETE customer; `heldNumbers` are the phone and connected messaging numbers it still holds. */
  | { type: 'customer.delete'; at: number; heldNumbers: string[] }
  | { type: 'customer.restore'; at: number }
  | { type: 'timer.due'; at: number }

/** Effects the runtime implements with `machine.provide({ actions })`. */
export const CUSTOMER_WORKSPACE_EFFECTS = [
  'revokeKeys',
  'switchOffWebhooks',
  'cancelCampaigns',
  'stopSequences',
  'stopCallbacks',
  'scheduleErasure',
  'cancelErasure',
  'eraseData',
] as const
export type CustomerWorkspaceEffect = (typeof CUSTOMER_WORKSPACE_EFFECTS)[number]

const noop = () => {}

const held = (event: CustomerWorkspaceEvent): string[] =>
  event.type === 'customer.delete' && Array.isArray(event.heldNumbers) ? event.heldNumbers : []

const refuse = (state: CustomerWorkspaceState, message: string) => ({
  actions: { type: 'recordRefusal' as const, params: { state, message } },
})

export const customerWorkspaceMachine = setup({
  types: {
    context: {} as CustomerWorkspaceContext,
    events: {} as CustomerWorkspaceEvent,
    input: {} as CustomerWorkspaceInput,
  },
  actions: {
    revokeKeys: noop,
    switchOffWebhooks: noop,
    cancelCampaigns: noop,
    stopSequences: noop,
    stopCallbacks: noop,
    scheduleErasure: noop,
    cancelErasure: noop,
    eraseData: noop,
    archive: assign({
      archivedAt: ({ event }) => event.at,
      eraseAt: ({ event }) => event.at + ERASE_AFTER_MS,
    }),
    unarchive: assign({ archivedAt: () => null, eraseAt: () => null }),
    markErased: assign({ erasedAt: ({ event }) => event.at }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
  guards: {
    holdsNoNumbers: ({ event }) => held(event).length === 0,
    erasureDue: ({ context, event }) =>
      context.eraseAt !== null && typeof event.at === 'number' && event.at >= context.eraseAt,
  },
}).createMachine({
  id: 'customerWorkspace',
  description: "A developer's customer workspace: live, archived for 30 days, then erased.",
  context: ({ input }) => ({ id: input.id, archivedAt: null, eraseAt: null, erasedAt: null, lastRefusal: null }),
  initial: 'active',
  states: {
    active: {
      description: 'In use: requests with its Service-Workspace header run inside it.',
      on: {
        'customer.delete': [
          {
            guard: 'holdsNoNumbers',
            target: 'deleted',
            actions: ['archive', 'revokeKeys', 'switchOffWebhooks', 'cancelCampaigns', 'stopSequences', 'stopCallbacks', 'scheduleErasure'],
          },
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
    deleted: {
      description: 'Archived: requests into it answer 410; erased when eraseAt passes unless restored.',
      on: {
        'customer.restore': { target: 'active', actions: ['unarchive', 'cancelErasure'] },
        'timer.due': { guard: 'erasureDue', target: 'erased', actions: ['markErased', 'eraseData'] },
        'customer.delete': refuse('deleted', 'customer is deleted already'),
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

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(
  target: CustomerWorkspaceSnapshot | CustomerWorkspaceState,
  event: CustomerWorkspaceEvent | CustomerWorkspaceEvent['type'],
): CanApply {
  return canApplyOn(customerWorkspaceMachine, target, event)
}
