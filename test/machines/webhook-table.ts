/**
 * Table-driven checks for charts whose effects are invoked actors (the webhook charts), run with
 * XState's pure `transition`: nothing is executed, so a row can assert exactly which effects a move
 * starts (`xstate.spawnChild` of a named src) and an effect's outcome is just another step
 * (`effectDone` / `effectError`, the events XState itself sends when an invoked actor ends).
 * Rows keep the shape of test/machines/table.ts: from, trigger, condition → to, also, context.
 */
import { expect, test } from 'bun:test'
import { type AnyMachineSnapshot, type AnyStateMachine, createActor, type EventObject, fromPromise, initialTransition, transition } from 'xstate'
import type { CanApply } from '../../machines/refusal'
import { expectRecordedRefusal } from './table'

/** An event or an effect outcome: one step of a walk. */
export type Step = EventObject & { [member: string]: unknown }

/** The event XState sends when the invoked actor `id` resolves. */
export const effectDone = (id: string, output?: unknown): Step => ({ type: `xstate.done.actor.${id}`, output, actorId: id })
/** The event XState sends when the invoked actor `id` rejects. */
export const effectError = (id: string, error: unknown): Step => ({ type: `xstate.error.actor.${id}`, error, actorId: id })

export interface PureHarness {
  machine: AnyStateMachine
  /** Names of the invoked actors the chart's states start. */
  effects: readonly string[]
  input: unknown
  /** Steps (events and effect outcomes) that bring a fresh actor to each state. */
  paths: Record<string, Step[]>
  canApply: (target: any, event: any) => CanApply
}

export interface PureRow {
  from: string
  event: Step
  condition?: string
  to: string
  /** Effects (invoked actor srcs) the move starts, in order. */
  also?: string[]
  context?: Record<string, unknown>
  input?: unknown
  via?: Step[]
}

export interface PureRefusedRow {
  from: string
  event: Step
  condition?: string
  says?: string
  guarded?: boolean
  via?: Step[]
}

export interface Walked {
  snapshot: AnyMachineSnapshot
  /** Effects started by the last step. */
  started: string[]
}

const startedBy = (actions: readonly { type: string; params?: unknown }[]): string[] =>
  actions
    .filter((a) => a.type === 'xstate.spawnChild')
    .map((a) => {
      const src = (a.params as { src?: unknown } | undefined)?.src
      return typeof src === 'string' ? src : String((a.params as { id?: unknown })?.id)
    })

/** Starts the chart with `input` and applies `steps`; returns the snapshot and the last step's effects. */
export function walk(h: PureHarness, steps: Step[], input: unknown = h.input): Walked {
  let [snapshot, actions] = initialTransition(h.machine, input) as [AnyMachineSnapshot, { type: string; params?: unknown }[]]
  let started = startedBy(actions)
  for (const step of steps) {
    ;[snapshot, actions] = transition(h.machine, snapshot, step) as [AnyMachineSnapshot, { type: string; params?: unknown }[]]
    started = startedBy(actions)
  }
  return { snapshot, started }
}

export function reachPure(h: PureHarness, from: string, given: { input?: unknown; via?: Step[] } = {}): AnyMachineSnapshot {
  const path = given.via ?? h.paths[from]
  if (!path) throw new Error(`no path to ${from}`)
  const { snapshot } = walk(h, path, given.input ?? h.input)
  expect(snapshot.value).toBe(from)
  return snapshot
}

const title = (r: { from: string; event: EventObject; condition?: string }, to: string) =>
  `${r.from} --${r.event.type.replace(/^xstate\.(done|error)\.actor\./, '$1:')}${r.condition ? ` [${r.condition}]` : ''}--> ${to}`

export function pureStarts(h: PureHarness, rows: { name: string; input: unknown; to: string; also?: string[]; context?: Record<string, unknown> }[]): void {
  for (const row of rows) {
    test(`(none) --${row.name}--> ${row.to}`, () => {
      const { snapshot, started } = walk(h, [], row.input)
      expect(snapshot.value).toBe(row.to)
      expect(started).toEqual(row.also ?? [])
      if (row.context) expect(snapshot.context).toMatchObject(row.context)
    })
  }
}

export function pureTransitions(h: PureHarness, rows: PureRow[]): void {
  for (const row of rows) {
    test(title(row, row.to), () => {
      const from = reachPure(h, row.from, row)
      const [next, actions] = transition(h.machine, from, row.event) as [AnyMachineSnapshot, { type: string; params?: unknown }[]]
      expect(next.status).toBe('active')
      expect(next.value).toBe(row.to)
      expect(startedBy(actions)).toEqual(row.also ?? [])
      if (row.context) expect(next.context).toMatchObject(row.context)
    })
  }
}

/** State and context unchanged but for lastRefusal naming the state; canApply agrees. */
export function pureRefusals(h: PureHarness, rows: PureRefusedRow[]): void {
  for (const row of rows) {
    test(title(row, 'refused'), () => {
      const before = reachPure(h, row.from, row)
      const asked = h.canApply(before, row.event)
      expect(asked).toMatchObject({ ok: false, state: row.from })
      if (!row.guarded) expect(h.canApply(row.from, row.event.type)).toMatchObject({ ok: false, state: row.from })
      const [after, actions] = transition(h.machine, before, row.event) as [AnyMachineSnapshot, { type: string }[]]
      expect(after.value).toBe(row.from)
      expect(startedBy(actions)).toEqual([])
      expectRecordedRefusal(before, after, row, asked)
    })
  }
}

/** A step that must change nothing at all (stale timer, late outcome). */
export function expectPureInert(h: PureHarness, snapshot: AnyMachineSnapshot, event: Step): void {
  const [after, actions] = transition(h.machine, snapshot, event) as [AnyMachineSnapshot, { type: string }[]]
  expect(after.value).toEqual(snapshot.value)
  expect(after.context).toEqual(snapshot.context)
  expect(startedBy(actions)).toEqual([])
}

/** Effects that never finish: a restored actor keeps its state while we look at it. */
export function idleEffects(h: PureHarness): AnyStateMachine {
  const actors = Object.fromEntries(h.effects.map((name) => [name, fromPromise(() => new Promise<never>(() => {}))]))
  return h.machine.provide({ actors } as any)
}

/** Persist → JSON → a started actor from that snapshot (what the runtime does on boot), per state. */
export function pureRoundTrips(h: PureHarness): void {
  for (const state of Object.keys(h.paths)) {
    test(`snapshot round-trip in ${state}`, () => {
      const snap = reachPure(h, state)
      const persisted = JSON.parse(JSON.stringify(h.machine.getPersistedSnapshot(snap)))
      const restored = createActor(idleEffects(h), { snapshot: persisted } as any).start()
      const b = restored.getSnapshot() as AnyMachineSnapshot
      expect(b.status).toBe('active')
      expect(b.value).toEqual(snap.value)
      expect(b.context).toEqual(snap.context)
      restored.stop()
    })
  }
}
