import { describe, expect, test } from 'bun:test'
import { newAgentDoc } from '../../../src/features/agents/defaults'
import { agentFieldsOf, captureSnapshot, changedPanels, diffSnapshots, PANELS, reshape } from '../../../src/features/versions/snapshot'
import { DEFAULT_DIALS } from '../../../src/voice/dials'

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

  test('a snapshot holds only what the agent has: no placeholder parts', () => {
    const snap = captureSnapshot(agent, [])
    // Reflect.get reads keys the snapshot's type does not have.
    for (const gone of ['memory', 'variables']) expect(Reflect.get(snap, gone)).toBeUndefined()
    expect(Object.keys(snap.voice).sort()).toEqual(Object.keys(agent.voice).sort())
    expect(Object.keys(snap.widget).sort()).toEqual(Object.keys(agent.widget).sort())
    expect(Reflect.get(snap.core, 'agentType')).toBeUndefined()
    expect(snap.workflow).toEqual({ steps: agent.steps })
  })

  test('a snapshot stored with the old placeholders reads, restores and compares as the present shape', () => {
    const now = captureSnapshot(agent, ['doc_a'])
    const stored = {
      ...structuredClone(now),
      core: { ...now.core, agentType: 'assistant' },
      tools: { ...now.tools, actions: [] },
      voice: { ...now.voice, sttProvider: 'service', ttsProvider: 'service', speed: 1, interruption: true },
      memory: { enabled: true },
      widget: { ...now.widget, domains: [], leadCapture: false, suggestedPrompts: [] },
      workflow: { steps: now.workflow.steps, graph: null, teamMembers: [] },
      variables: [],
    }
    // Through a variable, the present type takes the old parts as extra members (a literal would be refused).
    const old: typeof now = stored
    expect(reshape(old)).toEqual(now)
    expect(diffSnapshots(old, now)).toEqual({})
    expect(changedPanels(old, now)).toEqual([])
    expect({ ...agent, ...agentFieldsOf(old) }).toEqual(agent)
  })

  test('a snapshot stored before the voice dials existed reads with their defaults, and a set one keeps them', () => {
    const now = captureSnapshot(agent, ['doc_a'])
    const { speed: _s, patience: _p, interruptions: _i, ...voice } = now.voice
    const before = { ...structuredClone(now), voice: voice as typeof now.voice }
    expect(reshape(before).voice).toEqual({ ...voice, ...DEFAULT_DIALS })
    expect(diffSnapshots(before, now)).toEqual({})
    const dialled = captureSnapshot({ ...agent, voice: { ...agent.voice, speed: 1.1, patience: { level: 'patient', waitMs: null } } }, ['doc_a'])
    expect(reshape(dialled).voice).toMatchObject({ speed: 1.1, patience: { level: 'patient', waitMs: null } })
    expect(diffSnapshots(now, dialled)).toEqual({ 'voice.speed': { old: null, new: 1.1 }, 'voice.patience': { old: { level: 'normal', waitMs: null }, new: { level: 'patient', waitMs: null } } })
  })
})
