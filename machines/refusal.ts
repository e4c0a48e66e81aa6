/**
 * Refused moves, shared by every machine.
 *
 * docs/spec.md wants a move that does not apply to the current state (pause a draft campaign, retry a
 * delivery that has not failed, DELETE an ended call) to answer 409 *naming the current state*.
 * So each chart handles such an event in the states that refuse it with the `recordRefusal`
 * action: the state does not change, and `context.lastRefusal` says which event, in which state,
 * and why. The HTTP layer sends with the runtime's `ask` (actors/ask.ts), which answers this
 * event's refusal, or asks first with `canApply`.
 *
 * Why not just `snapshot.can(event)`: a handled-but-refused event is a transition with an action,
 * which `can` counts as allowed. `canApplyOn` therefore uses `can` for "is it handled at all"
 * and then a pure dry run (`transition`) to see whether the handler was a refusal.
 */
import { type AnyMachineSnapshot, type AnyStateMachine, type EventObject, transition } from 'xstate'

export interface Refusal {
  /** The event type that was refused, e.g. `campaign.pause`. */
  event: string
  /** The state it was refused in: what the 409 names. */
  state: string
  /** Plain words for the error body. */
  message: string
  /** The event's instant when it carried one. */
  at: number | null
}

/** Params of every machine's `recordRefusal` action. */
export interface RefusalParams {
  state: string
  message: string
}

export type CanApply = { ok: true } | { ok: false; state: string; message: string }

/** Builds the `lastRefusal` value; used inside each machine's `recordRefusal` assign. */
export function refusalOf(event: EventObject, params: RefusalParams): Refusal {
  const at = (event as { at?: unknown }).at
  return {
    event: event.type,
    state: params.state,
    message: params.message,
    at: typeof at === 'number' ? at : null,
  }
}

/** The state name of a flat machine's snapshot (every machine here is flat). */
export function stateOf(snapshot: AnyMachineSnapshot): string {
  return typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value)
}

const notApplicable = (type: string, state: string): CanApply => ({
  ok: false,
  state,
  message: `${type} does not apply while ${state}`,
})

type RefusalAction = { type: 'recordRefusal'; params?: unknown }
const isRefusal = (a: unknown): a is RefusalAction => typeof a === 'object' && a !== null && (a as { type?: unknown }).type === 'recordRefusal'

/**
 * Would `event` be applied? With a snapshot the answer is exact (guards see the real context and
 * the event's payload). With only a state name the answer is static: handled events whose every
 * handler is a refusal are refused with the chart's own message; a guarded accept is reported as
 * ok (its guard may still refuse at send time).
 */
export function canApplyOn(machine: AnyStateMachine, target: AnyMachineSnapshot | string, event: string | EventObject): CanApply {
  const ev: EventObject = typeof event === 'string' ? { type: event } : event
  if (typeof target === 'string') return staticCanApply(machine, target, ev.type)
  const state = stateOf(target)
  if (!target.can(ev)) return notApplicable(ev.type, state)
  const [next] = transition(target.machine ?? machine, target, ev)
  const before = target.context?.lastRefusal
  const after = (next as AnyMachineSnapshot).context?.lastRefusal as Refusal | null | undefined
  if (after && after !== before) return { ok: false, state, message: after.message }
  return { ok: true }
}

function staticCanApply(machine: AnyStateMachine, state: string, type: string): CanApply {
  const node = machine.states[state]
  if (!node) return { ok: false, state, message: `unknown state ${state}` }
  // The state's own handler wins; otherwise the nearest ancestor's (e.g. a root-level "any" row).
  let defs: readonly { actions: readonly unknown[] }[] = []
  for (let n: typeof node | undefined = node; n && defs.length === 0; n = n.parent) defs = n.on[type] ?? []
  if (defs.length === 0) return notApplicable(type, state)
  const refusals = defs.map((d) => d.actions.find(isRefusal))
  if (refusals.every((r) => r !== undefined)) {
    const params = refusals[0]?.params
    const message = typeof params === 'object' && params !== null && 'message' in params ? String((params as RefusalParams).message) : `${type} is refused while ${state}`
    return { ok: false, state, message }
  }
  return { ok: true }
}
