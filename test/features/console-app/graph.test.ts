/** State charts as graphs (console-app/graph.ts): every state, eventless and guarded transitions labelled. */
import { expect, test } from 'bun:test'
import { machineNames } from '../../../machines'
import { chartGraph } from '../../../src/features/console-app/graph'

test('the call chart: its states, the transient first state with its eventless ways out, guards named', () => {
  const g = chartGraph('call')
  expect(g.id).toBe('call')
  expect(g.nodes.map((n) => n.label)).toEqual(['created', 'scheduled', 'ringing', 'connected', 'consulting', 'joining', 'transferring', 'transferred', 'completed', 'missed', 'failed', 'cancelled'])
  expect(g.nodes.filter((n) => n.initial).map((n) => n.id)).toEqual(['call.created'])
  const from = (source: string) => g.edges.filter((e) => e.source === `call.${source}`).map((e) => `${e.label} → ${e.target.slice(5)}`)
  expect(from('created')).toEqual(['always [isUnplaced] → failed', 'always [isInbound] → connected', 'always [isScheduled] → scheduled', 'always → ringing'])
  expect(from('ringing')).toEqual(expect.arrayContaining(['call.answered → connected', 'call.unanswered → missed', 'error: placeCall [cannotBePlaced | else] → failed']))
  expect(from('missed')).toEqual(['always [retryBooked] → scheduled'])
  // Handled in place (no target): listed on the state, not drawn as an edge.
  expect(g.nodes.find((n) => n.id === 'call.completed')!.internal).toEqual(expect.arrayContaining(['call.delete', 'done: analyseCall']))
  expect(g.edges.every((e) => g.nodes.some((n) => n.id === e.target))).toBe(true)
})

test('every registered machine becomes a graph whose edges join its own states', () => {
  for (const name of machineNames) {
    const g = chartGraph(name)
    const ids = new Set(g.nodes.map((n) => n.id))
    expect(g.nodes.length).toBeGreaterThan(1)
    for (const e of g.edges) expect(ids.has(e.source) && ids.has(e.target)).toBe(true)
    for (const n of g.nodes) if (n.parent) expect(ids.has(n.parent)).toBe(true)
  }
})
