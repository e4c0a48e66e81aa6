import { describe, expect, test } from 'bun:test'
import { newAgentDoc } from '../../../src/features/agents/defaults'
import { agentFieldsOf, captureSnapshot, changedPanels, diffSnapshots, PANELS } from '../../../src/features/versions/snapshot'

const agent = newAgentDoc('ws_1', 'Ava', 'local', '2025-01-06T09:00:00.000Z')

describe('snapshots', () => {
  test('capture holds every panel; restoring its fields gives the agent back', () => {
    const snap = captureSnapshot(agent, ['doc_b', 'doc_a'])
    expect(Object.keys(snap)).toEqual([...PANELS])
    expect(snap.knowledge.documentIds).toEqual(['doc_a', 'doc_b'])
    const restored = { ...agent, ...agentFieldsOf(snap) }
    expect(restored).toEqual(agent)
  })

  test('a capture is detached from the agent it came from', () => {
    const copy = structuredClone(agent)
    const snap = captureSnapshot(copy, [])
    copy.steps.push({ title: 't', detail: 'd' })
    copy.widget.height = 700
    expect(snap.workflow.steps).toEqual([])
    expect(snap.widget.height).toBe(agent.widget.height)
  })

  test('diffs name fields by panel path, and panels by name', () => {
    const a = captureSnapshot(agent, [])
    const b = captureSnapshot({ ...agent, instructions: 'new', voice: { ...agent.voice, recordCalls: true } }, ['doc_1'])
    expect(diffSnapshots(a, b)).toEqual({
      'core.instructions': { old: agent.instructions, new: 'new' },
      'knowledge.documentIds': { old: [], new: ['doc_1'] },
      'voice.recordCalls': { old: false, new: true },
    })
    expect(changedPanels(a, b)).toEqual(['core', 'knowledge', 'voice'])
    expect(diffSnapshots(a, a)).toEqual({})
  })
})
