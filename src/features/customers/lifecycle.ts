/**
 * DELETE /customers/{id} and POST /customers/{id}/restore as moves of the customer-workspace
 * actor (docs/spec.md "Customer workspace"). The route asks; the chart decides; the answer waits until
 * the effect the move started has run and its outcome is stored (`settle`).
 *
 * How a refusal is told apart from an acceptance: every accepted move changes the state and no
 * refusal does, so the state before the send is compared with the state after it. (If another
 * request moved the actor in between, the caller sees the outcome of that move; both asked for
 * the same thing.)
 */

import { ActorUnavailableError } from '../../../actors/errors'
import type { CustomerWorkspaceContext } from '../../../machines/customer-workspace'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, unavailable } from '../../refusals'
import type { WorkspaceRepo } from '../workspaces/public'
import type { CustomerWorkspaceActors } from './actor'

export interface HeldNumber {
  number: string
  channel: 'voice' | 'chatapp'
}

export interface CustomerLifecycleDeps {
  actors: CustomerWorkspaceActors
  workspaces: WorkspaceRepo
  /** The numbers a workspace holds, oldest first (the phone-numbers feature's `heldBy`). */
  numbersHeldBy: (workspaceId: string) => Promise<{ number: string }[]>
  clock: Clock
}

// When an effect cannot run now, the caller may come back after the chart's first retry wait
// (EFFECT_RETRY_FIRST_MS, 30 s): asking sooner finds the same state.
const RETRY_AFTER_S = 30

export class CustomerLifecycle {
  constructor(private readonly deps: CustomerLifecycleDeps) {}

  /** Archives the customer (200 with archivedAt and eraseAfter); 409 naming held numbers or the state. */
  async remove(customer: WorkspaceDoc): Promise<WorkspaceDoc> {
    // Every number in the workspace counts: voice numbers and the messaging numbers connected to it.
    const numbers = await this.deps.numbersHeldBy(customer.id)
    const heldNumbers = numbers.map((n) => n.number)
    const context = await this.move(customer, { type: 'customer.delete', at: this.deps.clock.now(), heldNumbers }, 'deleted', (state) =>
      state === 'active' && heldNumbers.length > 0 ? { numbers: heldNumbers } : {},
    )
    return this.current(customer, context)
  }

  /** Brings a deleted customer back (200, archivedAt and eraseAfter null); 409 naming the state otherwise. */
  async restore(customer: WorkspaceDoc): Promise<WorkspaceDoc> {
    const context = await this.move(customer, { type: 'customer.restore', at: this.deps.clock.now() }, 'active')
    return this.current(customer, context)
  }

  private async move(
    customer: WorkspaceDoc,
    event: Parameters<CustomerWorkspaceActors['send']>[1],
    target: string,
    extra: (state: string) => Record<string, unknown> = () => ({}),
  ): Promise<CustomerWorkspaceContext> {
    const { actors } = this.deps
    const id = customer.id
    const input = { id, developerId: customer.parentId }
    // Every state takes both moves: one that does not apply is refused by the chart, naming the state.
    const asked = await actors.ask(id, event, { input })
    if (!asked.ok) {
      const now = String(asked.snapshot.value)
      throw clashes(asked.refusal.message, { state: now, ...extra(now) })
    }
    const settled = await this.settle(id)
    const state = String(settled.state)
    const context = (settled.snapshot as { context: CustomerWorkspaceContext }).context
    if (state === target) return context
    if (context.lastError && context.retryAt !== null) {
      throw unavailable(`customer ${id} is ${state}: ${context.lastError.message}; it is retried automatically at ${iso(context.retryAt)}`, RETRY_AFTER_S, {
        state,
        retryAt: iso(context.retryAt),
      })
    }
    // Another request moved it on meanwhile: say where it is now.
    throw clashes(`customer ${id} is ${state}`, { state })
  }

  private async settle(id: string) {
    try {
      return await this.deps.actors.settle(id)
    } catch (err) {
      if (err instanceof ActorUnavailableError) {
        // settle gave up after its 10 s; the effect is still running and is never lost (it is
        // in the stored snapshot), so a read a second later usually shows it done.
        throw unavailable(`customer ${id}: the change is recorded and still being applied; read it again shortly`, 1, {})
      }
      throw err
    }
  }

  /** The customer as stored now (the effect wrote it); the context's instants if it is gone. */
  private async current(customer: WorkspaceDoc, context: CustomerWorkspaceContext): Promise<WorkspaceDoc> {
    const doc = await this.deps.workspaces.get(customer.id)
    if (doc) return doc
    return {
      ...customer,
      archivedAt: context.archivedAt === null ? null : iso(context.archivedAt),
      eraseAfter: context.eraseAt === null ? null : iso(context.eraseAt),
    }
  }
}
