/**
 * A state chart as a graph the page lays out (elkjs) and draws: its states (nested ones inside
 * their parent) and its transitions, labelled with the event and guard. Read from the machine
 * itself rather than its JSON form, which leaves out eventless (`always`) and delayed transitions.
 * Transitions without a target (actions only, or refusals) are listed on their state instead.
 */
import { type MachineName, machineNames, machines } from '../../../machines'

export interface ChartNode {
  id: string
  label: string
  parent: string | null
  type: string
  /** Entered first inside its parent. */
  initial: boolean
  description: string | null
  /** Events the state handles without leaving it. */
  internal: string[]
}

export interface ChartEdge {
  id: string
  source: string
  target: string
  label: string
  kind: 'event' | 'always' | 'after' | 'done' | 'error'
}

export interface ChartGraph {
  name: string
  id: string
  version: number
  nodes: ChartNode[]
  edges: ChartEdge[]
}

interface StateNodeLike {
  id: string
  key: string
  type: string
  description?: string
  states: Record<string, StateNodeLike>
  initial?: { target?: readonly StateNodeLike[] }
  transitions: Map<string, readonly TransitionLike[]>
  always?: readonly TransitionLike[]
  after?: readonly (TransitionLike & { delay?: unknown })[]
}

interface TransitionLike {
  target?: readonly StateNodeLike[]
  guard?: unknown
  eventType?: string
}

const guardName = (guard: unknown): string | null => (typeof guard === 'string' ? guard : typeof guard === 'object' && guard && 'type' in guard ? String((guard as { type: unknown }).type) : null)

function eventLabel(eventType: string): { label: string; kind: ChartEdge['kind'] } {
  const done = /^xstate\.done\.actor\.(.+)$/.exec(eventType)
  if (done) return { label: `done: ${done[1]}`, kind: 'done' }
  const error = /^xstate\.error\.actor\.(.+)$/.exec(eventType)
  if (error) return { label: `error: ${error[1]}`, kind: 'error' }
  return { label: eventType, kind: 'event' }
}

export const isMachineName = (name: string): name is MachineName => (machineNames as string[]).includes(name)

export function chartGraph(name: MachineName): ChartGraph {
  const { machine, version } = machines[name]
  const nodes: ChartNode[] = []
  // One edge per (source, target, event); several guards for it read "a | b".
  const edges = new Map<string, ChartEdge & { guards: string[]; unguarded: boolean }>()
  const add = (source: string, t: TransitionLike, label: string, kind: ChartEdge['kind']) => {
    const guard = guardName(t.guard)
    for (const target of t.target ?? []) {
      const key = `${source}→${target.id}:${label}`
      const edge = edges.get(key) ?? { id: `e${edges.size}`, source, target: target.id, label, kind, guards: [], unguarded: false }
      if (guard) edge.guards.push(guard)
      else edge.unguarded = true
      edges.set(key, edge)
    }
  }
  const walk = (node: StateNodeLike, parent: string | null, initial: boolean) => {
    const internal: string[] = []
    for (const [eventType, list] of node.transitions) {
      for (const t of list) {
        const { label, kind } = eventLabel(t.eventType ?? eventType)
        if (t.target?.length) add(node.id, t, label, kind)
        else if (!internal.includes(label)) internal.push(label)
      }
    }
    for (const t of node.always ?? []) add(node.id, t, 'always', 'always')
    for (const t of node.after ?? []) add(node.id, t, `after ${typeof t.delay === 'number' ? `${t.delay} ms` : String(t.delay ?? '')}`.trim(), 'after')
    if (parent !== null) nodes.push({ id: node.id, label: node.key, parent: parent === machine.root.id ? null : parent, type: node.type, initial, description: node.description ?? null, internal })
    const first = new Set((node.initial?.target ?? []).map((s) => s.id))
    for (const child of Object.values(node.states ?? {})) walk(child, node.id, first.has(child.id))
  }
  walk(machine.root, null, false)
  const shown = [...edges.values()].map(({ guards, unguarded, ...edge }) => ({
    ...edge,
    label: guards.length ? `${edge.label} [${[...guards, ...(unguarded ? ['else'] : [])].join(' | ')}]` : edge.label,
  }))
  return { name, id: machine.id, version, nodes, edges: shown }
}
