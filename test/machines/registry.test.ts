import { describe, expect, test } from 'bun:test'
import type { AnyStateMachine } from 'xstate'
import { machineDefinition, machineNames, machines } from '../../machines/index'

type Node = {
  id: string
  description?: string
  states: Record<string, Node>
  on: Record<string, { actions: unknown[] }[]>
  always?: { actions: unknown[] }[]
  entry: unknown[]
  exit: unknown[]
  invoke?: { src: unknown }[]
}

function* nodes(n: Node): Generator<Node> {
  yield n
  for (const child of Object.values(n.states)) yield* nodes(child)
}

const actionName = (a: unknown) => (typeof a === 'string' ? a : (a as { type: string }).type)

function referencedActions(n: Node): string[] {
  const out: unknown[] = [...n.entry, ...n.exit]
  for (const ts of Object.values(n.on)) for (const t of ts) out.push(...t.actions)
  for (const t of n.always ?? []) out.push(...t.actions)
  return out.map(actionName)
}

test('the registry lists the eight machines with a version each', () => {
  expect(machineNames).toEqual(['call', 'campaign', 'customerWorkspace', 'webhookEndpoint', 'webhookDelivery', 'enrolment', 'agentPublication', 'simulationRun'])
  for (const name of machineNames) expect(machines[name].version).toBeGreaterThanOrEqual(1)
})

for (const name of machineNames) {
  describe(`registry: ${name}`, () => {
    const machine = machines[name].machine as AnyStateMachine
    const root = machineDefinition(name) as Node

    test('exports as plain JSON, with the same shape as machine.definition', () => {
      expect(root.id).toBe(machine.id)
      expect(Object.keys(root.states)).toEqual(Object.keys(machine.definition.states))
    })

    test('every state node has a description', () => {
      for (const n of nodes(root)) expect({ id: n.id, description: n.description }).toEqual({ id: n.id, description: expect.any(String) })
    })

    test('no `after` timers: durable waits are deadlines in context', () => {
      for (const state of Object.values(machine.states)) expect(state.after).toEqual([])
    })

    test('every action the chart names is implemented, and every effect is named in the chart', () => {
      const implemented = Object.keys(machine.implementations.actions)
      const used = new Set([...nodes(root)].flatMap(referencedActions))
      // An effect may also be an invoked actor (docs/design.md effects convention): named by its src.
      const invoked = new Set([...nodes(root)].flatMap((n) => (n.invoke ?? []).map((i) => String(i.src))))
      // …or spawned by an action the chart names (`spawnChild`: an effect that outlives its state).
      const spawned = new Set(
        [...used]
          .map((a) => (machine.implementations.actions as Record<string, { type?: string; src?: unknown }>)[a])
          .filter((a) => a?.type === 'xstate.spawnChild')
          .map((a) => String(a!.src)),
      )
      for (const src of [...invoked, ...spawned]) expect(Object.keys(machine.implementations.actors)).toContain(src)
      for (const a of used) expect(implemented).toContain(a)
      for (const e of machines[name].effects) expect(used.has(e) || invoked.has(e) || spawned.has(e)).toBe(true)
    })
  })
}
