/**
 * Table-driven checks shared by the machine tests.
 *
 * A harness says how to start a machine (default input) and how to reach each state from the
 * start (a path of events). Effects are provided as recorders, so a row can assert exactly which
 * named effects ran, in order; assign actions stay real so context changes can be asserted too.
 *
 * Effects may also be invoked actors (docs/design.md: an I/O effect is an actor invoked on entry of a
 * short effect state). Name them in `invokes`: each is faked by a promise that records its name
 * and resolves, and the walker waits for them to finish before checking where the machine
 * settled, so a docs/spec.md row `from → to` still reads `from → to` with the effect state in
 * `through`. Machines without invoked effects behave exactly as before. Events a chart emits
 * (`emit()`: domain events on their way to the bus) are logged as `emit:<type>` in the same log.
 */
import { expect, test } from 'bun:test'
import { type AnyActorLogic, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine, createActor, type EventObject, fromPromise } from 'xstate'
import type { CanApply } from '../../machines/refusal'

export interface Harness<E extends EventObject = EventObject> {
  machine: AnyStateMachine
  effects: readonly string[]
  input: unknown
  /** Events that bring a fresh actor (default input) to each state. */
  paths: Record<string, E[]>
  canApply: (target: any, event: any) => CanApply
  /** Invoked effects (actor names in `setup({ actors })`); each fake records its name and resolves. */
  invokes?: readonly string[]
}

/** Fakes for invoked effects, given the row's effect log (override the recorders by name). */
export type Fakes = (log: string[]) => Record<string, AnyActorLogic>

export interface Given<E extends EventObject> {
  /** Input override for this row. */
  input?: unknown
  /** Path override: events from the start to `from`. */
  via?: E[]
  /** Invoked-effect fakes for this row (e.g. one that fails, or never finishes). */
  fakes?: Fakes
}

export interface Row<E extends EventObject> extends Given<E> {
  from: string
  event: E
  condition?: string
  to: string
  /** Effect states passed on the way to `to`, in order (checked when given). */
  through?: string[]
  /** Named effects expected, in order. */
  also?: string[]
  /** Expected subset of the context afterwards. */
  context?: Record<string, unknown>
}

export interface RefusedRow<E extends EventObject> extends Given<E> {
  from: string
  event: E
  condition?: string
  /** Words the refusal message must contain (besides the state's name). */
  says?: string
  /** A guarded refusal cannot be seen from the state name alone. */
  guarded?: boolean
}

export interface Started {
  actor: AnyActorRef
  /** Effects run since `reach` arrived; cleared on arrival. */
  log: string[]
}

/** Starts an actor whose emitted events (`emit()`) are logged as `emit:<type>`, in order with the effects. */
function startLogged(machine: AnyStateMachine, options: Record<string, unknown>, log: string[]): AnyActorRef {
  const actor = createActor(machine, options as any)
  actor.on('*', (e: EventObject) => void log.push(`emit:${e.type}`))
  return actor.start()
}

export function recorderMachine(h: Harness<any>, log: string[], fakes?: Fakes): AnyStateMachine {
  const invoked = new Set(h.invokes ?? [])
  const actions = Object.fromEntries(h.effects.filter((n) => !invoked.has(n)).map((name) => [name, () => void log.push(name)]))
  if (invoked.size === 0) return h.machine.provide({ actions } as any)
  const actors: Record<string, AnyActorLogic> = Object.fromEntries([...invoked].map((name) => [name, fromPromise(async () => void log.push(name))]))
  return h.machine.provide({ actions, actors: { ...actors, ...(fakes?.(log) ?? {}) } } as any)
}

// Fakes resolve within a few microtasks; 50 macrotask turns is far more than any needs, and a
// fake held on purpose (never resolving) only costs those turns before the check goes on.
const SETTLE_TURNS = 50

const running = (actor: AnyActorRef): boolean =>
  Object.values((actor.getSnapshot() as AnyMachineSnapshot).children ?? {}).some((c) => (c as AnyActorRef | undefined)?.getSnapshot().status === 'active')

/** Waits until no invoked effect of the actor is running (or a held one is clearly not finishing). */
export async function settle(actor: AnyActorRef): Promise<void> {
  for (let i = 0; i < SETTLE_TURNS && running(actor); i++) await new Promise((resolve) => setTimeout(resolve, 0))
}

/** Like `reach`, for machines with invoked effects: waits for each path event's effects to finish. */
export async function reachSettled<E extends EventObject>(h: Harness<E>, from: string, given: Given<E> = {}): Promise<Started> {
  const log: string[] = []
  const actor = startLogged(recorderMachine(h, log, given.fakes), { input: given.input ?? h.input }, log)
  const path = given.via ?? h.paths[from]
  if (!path) throw new Error(`no path to ${from}`)
  for (const event of path) {
    actor.send(event)
    await settle(actor)
  }
  expect(actor.getSnapshot().value).toBe(from)
  log.length = 0
  return { actor, log }
}

/** A started actor brought to `from` along its path; the log holds only later effects. */
export function reach<E extends EventObject>(h: Harness<E>, from: string, given: Given<E> = {}): Started {
  const log: string[] = []
  const actor = startLogged(recorderMachine(h, log), { input: given.input ?? h.input }, log)
  const path = given.via ?? h.paths[from]
  if (!path) throw new Error(`no path to ${from}`)
  for (const event of path) actor.send(event)
  expect(actor.getSnapshot().value).toBe(from)
  log.length = 0
  return { actor, log }
}

const title = (r: { from: string; event: EventObject; condition?: string }, to: string) => `${r.from} --${r.event.type}${r.condition ? ` [${r.condition}]` : ''}--> ${to}`

/** One test per row: from, trigger, condition → to (through effect states), also (effects in order), context. */
export function transitions<E extends EventObject>(h: Harness<E>, rows: Row<E>[]): void {
  for (const row of rows) {
    test(title(row, row.to), async () => {
      const { actor, log } = await reachSettled(h, row.from, row)
      const seen: unknown[] = []
      const sub = actor.subscribe((s: AnyMachineSnapshot) => {
        if (seen[seen.length - 1] !== s.value) seen.push(s.value)
      })
      actor.send(row.event)
      await settle(actor)
      sub.unsubscribe()
      const snap = actor.getSnapshot() as AnyMachineSnapshot
      expect(snap.status).toBe('active')
      expect(snap.value).toBe(row.to)
      if (row.through) expect(seen.filter((v) => v !== row.from && v !== row.to)).toEqual(row.through)
      expect(log).toEqual(row.also ?? [])
      if (row.context) expect(snap.context).toMatchObject(row.context)
    })
  }
}

/**
 * After a refused move: the context is unchanged but for `lastRefusal`, which names the event and
 * the state (in its message too), and says what `canApply` said beforehand.
 */
export function expectRecordedRefusal(before: AnyMachineSnapshot, after: AnyMachineSnapshot, row: { from: string; event: EventObject; says?: string }, asked: { ok: boolean; message?: string }): void {
  const { lastRefusal, ...rest } = after.context
  const { lastRefusal: _prior, ...restBefore } = before.context
  expect(rest).toEqual(restBefore)
  expect(lastRefusal).toMatchObject({ event: row.event.type, state: row.from })
  expect(lastRefusal.message).toContain(row.from)
  if (row.says) expect(lastRefusal.message).toContain(row.says)
  if (!asked.ok) expect(asked.message).toBe(lastRefusal.message)
}

/** One test per refused move: state and context unchanged but for lastRefusal naming the state. */
export function refusals<E extends EventObject>(h: Harness<E>, rows: RefusedRow<E>[]): void {
  for (const row of rows) {
    test(`${title(row, 'refused')}`, async () => {
      const { actor, log } = await reachSettled(h, row.from, row)
      const before = actor.getSnapshot() as AnyMachineSnapshot

      const asked = h.canApply(before, row.event)
      expect(asked).toMatchObject({ ok: false, state: row.from })
      if (!row.guarded) expect(h.canApply(row.from, row.event.type)).toMatchObject({ ok: false, state: row.from })

      actor.send(row.event)
      await settle(actor)
      const after = actor.getSnapshot() as AnyMachineSnapshot
      expect(after.value).toBe(row.from)
      expect(log).toEqual([])
      expectRecordedRefusal(before, after, row, asked)
    })
  }
}

/** An event that must change nothing at all (stale or duplicate timer, late provider report). */
export function expectInert<E extends EventObject>(started: Started, event: E): void {
  const before = started.actor.getSnapshot() as AnyMachineSnapshot
  started.actor.send(event)
  const after = started.actor.getSnapshot() as AnyMachineSnapshot
  expect(after.value).toEqual(before.value)
  expect(after.context).toEqual(before.context)
  expect(started.log).toEqual([])
}

/** Persist → JSON → restore in every state of the harness: same state, same context, alive. */
export function roundTrips<E extends EventObject>(h: Harness<E>, states: string[] = Object.keys(h.paths)): void {
  for (const state of states) {
    test(`snapshot round-trip in ${state}`, async () => {
      const { actor } = await reachSettled(h, state)
      const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()))
      const restored = createActor(h.machine, { snapshot: persisted } as any).start()
      const a = actor.getSnapshot() as AnyMachineSnapshot
      const b = restored.getSnapshot() as AnyMachineSnapshot
      expect(b.status).toBe('active')
      expect(b.value).toEqual(a.value)
      expect(b.context).toEqual(a.context)
    })
  }
}

export interface StartRow {
  name: string
  input: unknown
  to: string
  also?: string[]
  context?: Record<string, unknown>
}

/** Rows whose "from" is (none): creating the actor with an input. */
export function starts(h: Harness<any>, rows: StartRow[]): void {
  for (const row of rows) {
    test(`(none) --${row.name}--> ${row.to}`, () => {
      const log: string[] = []
      const actor = startLogged(recorderMachine(h, log), { input: row.input }, log)
      const snap = actor.getSnapshot() as AnyMachineSnapshot
      expect(snap.value).toBe(row.to)
      expect(log).toEqual(row.also ?? [])
      if (row.context) expect(snap.context).toMatchObject(row.context)
    })
  }
}

/**
 * Persist → JSON → a new started actor from that snapshot (what the runtime does on boot).
 * With `log`, the restored actor runs the recording effects (an effect in flight re-runs).
 */
export function restore(h: Harness<any>, actor: AnyActorRef, log?: string[], fakes?: Fakes): AnyActorRef {
  const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()))
  const machine = log ? recorderMachine(h, log, fakes) : h.machine
  return log ? startLogged(machine, { snapshot: persisted }, log) : createActor(machine, { snapshot: persisted } as any).start()
}
