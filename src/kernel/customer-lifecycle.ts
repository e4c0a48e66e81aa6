/**
 * The seam between the customer lifecycle and the features that own what a lifecycle move must
 * also change (docs/spec.md "Customer workspace", "also" column): a feature subscribes here once, at
 * wiring time, and the customer-workspace actor fires every subscriber when the move is applied.
 *
 * - onDeleted: webhooks switched off, campaigns cancelled, sequences and scheduled callbacks
 *   stopped (a call in progress finishes: nobody should end it here).
 * - onRestored: nothing is restarted by default (docs/spec.md: campaigns are not restarted, old keys do
 *   not return); here for features that keep their own view of the workspace.
 * - onErased: the feature erases what it stores for that workspace (recordings, files, …).
 *
 * Contract for subscribers: a hook must be idempotent and safe to run again, because the effect
 * that fires it is re-run after a crash or a failure (its retry re-fires every hook of the phase).
 * A hook that throws fails the effect, which is then retried (machines/customer-workspace.ts); the
 * other hooks of the phase still run first.
 */

export interface CustomerLifecycleEvent {
  /** The customer workspace (`org_…`). */
  customerId: string
  /** The developer workspace that owns it, when known. */
  developerId: string | null
  /** When the move happened on the service clock (epoch ms): archivedAt, restoredAt or erasedAt. */
  at: number
}

export type CustomerLifecycleHook = (event: CustomerLifecycleEvent) => void | Promise<void>

export type LifecyclePhase = 'deleted' | 'restored' | 'erased'

export class CustomerLifecycleHooks {
  private readonly hooks: Record<LifecyclePhase, { name: string; fn: CustomerLifecycleHook }[]> = {
    deleted: [],
    restored: [],
    erased: [],
  }

  /** `name` (default: the function's name) says who failed in the actor's `lastError`. */
  onDeleted(fn: CustomerLifecycleHook, name?: string): () => void {
    return this.add('deleted', fn, name)
  }

  onRestored(fn: CustomerLifecycleHook, name?: string): () => void {
    return this.add('restored', fn, name)
  }

  onErased(fn: CustomerLifecycleHook, name?: string): () => void {
    return this.add('erased', fn, name)
  }

  /** Runs every hook of the phase in subscription order; throws once, naming each that failed. */
  async fire(phase: LifecyclePhase, event: CustomerLifecycleEvent): Promise<void> {
    const failed: string[] = []
    for (const hook of [...this.hooks[phase]]) {
      try {
        await hook.fn(event)
      } catch (err) {
        failed.push(`${hook.name}: ${err instanceof Error ? err.message : String(err)}`)
      }
    }
    if (failed.length > 0) throw new Error(`customer ${phase} hooks failed (${failed.join('; ')})`)
  }

  private add(phase: LifecyclePhase, fn: CustomerLifecycleHook, name?: string): () => void {
    const entry = { name: name ?? (fn.name || `${phase} hook ${this.hooks[phase].length + 1}`), fn }
    this.hooks[phase].push(entry)
    return () => {
      const i = this.hooks[phase].indexOf(entry)
      if (i >= 0) this.hooks[phase].splice(i, 1)
    }
  }
}
