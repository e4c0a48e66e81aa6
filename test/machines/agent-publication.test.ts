import { describe, expect, test } from 'bun:test'
import {
  AGENT_PUBLICATION_EFFECTS,
  agentPublicationMachine,
  canApply,
  publicationStatus,
  type AgentPublicationEvent,
} from '../../machines/agent-publication'
import { expectInert, reach, refusals, roundTrips, starts, transitions, type Harness, type RefusedRow, type Row } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const publish = (versionId: number, at = T0 + versionId): AgentPublicationEvent => ({ type: 'agent.publish', at, versionId })
const edit = (...changedFields: string[]): AgentPublicationEvent => ({ type: 'agent.edit', at: T0 + 50, changedFields })
const unpublish: AgentPublicationEvent = { type: 'agent.unpublish', at: T0 + 60 }
const rollback: AgentPublicationEvent = { type: 'agent.rollback', at: T0 + 70, toVersionId: 1, backupVersionId: 7, versionId: 8 }
const checkpoint: AgentPublicationEvent = { type: 'agent.checkpoint', at: T0 + 80, versionId: 9 }
const ROLLBACK_EFFECTS = ['backupCurrent', 'restoreVersion', 'freezeVersion', 'goLive']
const afterRollback = { publishedVersionId: 8, restoredFromVersionId: 1, lastPublishedAt: T0 + 70, changedFields: [] }

const h: Harness<AgentPublicationEvent> = {
  machine: agentPublicationMachine,
  effects: AGENT_PUBLICATION_EFFECTS,
  input: { agentId: 'ag_1' },
  canApply,
  paths: {
    draft: [],
    published: [publish(1)],
    publishedWithChanges: [publish(1), edit('instructions')],
  },
}

describe('agent publication: created', () => {
  starts(h, [{ name: 'new agent', input: { agentId: 'ag_1' }, to: 'draft', context: { publishedVersionId: null, changedFields: [] } }])
})

// SPEC.md "Agent publication (legacy)", row by row ("any" expanded to every state).
const rows: Row<AgentPublicationEvent>[] = [
  { from: 'draft', event: publish(1), condition: 'POST publish', to: 'published', also: ['freezeVersion', 'goLive'], context: { publishedVersionId: 1, lastPublishedAt: T0 + 1 } },
  { from: 'published', event: edit('instructions', 'voice'), condition: 'edits', to: 'publishedWithChanges', context: { changedFields: ['instructions', 'voice'] } },
  { from: 'published', event: publish(2), condition: 'POST publish', to: 'published', also: ['freezeVersion', 'goLive'], context: { publishedVersionId: 2, lastPublishedAt: T0 + 2 } },
  { from: 'published', event: unpublish, condition: 'POST unpublish', to: 'draft', also: ['stopServing'], context: { publishedVersionId: null, lastPublishedAt: T0 + 1 } },
  { from: 'draft', event: rollback, condition: 'any: POST rollback', to: 'published', also: ROLLBACK_EFFECTS, context: afterRollback },
  { from: 'published', event: rollback, condition: 'any: POST rollback', to: 'published', also: ROLLBACK_EFFECTS, context: afterRollback },
  { from: 'publishedWithChanges', event: rollback, condition: 'any: POST rollback', to: 'published', also: ROLLBACK_EFFECTS, context: afterRollback },
  { from: 'draft', event: checkpoint, condition: 'any: POST versions', to: 'draft', also: ['storeCheckpoint'], context: { lastCheckpointVersionId: 9, publishedVersionId: null } },
  { from: 'published', event: checkpoint, condition: 'any: POST versions', to: 'published', also: ['storeCheckpoint'], context: { lastCheckpointVersionId: 9, publishedVersionId: 1 } },
  { from: 'publishedWithChanges', event: checkpoint, condition: 'any: POST versions', to: 'publishedWithChanges', also: ['storeCheckpoint'], context: { lastCheckpointVersionId: 9, changedFields: ['instructions'] } },
  // Implied rows.
  { from: 'publishedWithChanges', event: edit('voice', 'instructions'), condition: 'more edits', to: 'publishedWithChanges', context: { changedFields: ['instructions', 'voice'] } },
  { from: 'publishedWithChanges', event: publish(2), condition: 'POST publish', to: 'published', also: ['freezeVersion', 'goLive'], context: { publishedVersionId: 2, changedFields: [] } },
  { from: 'publishedWithChanges', event: unpublish, condition: 'POST unpublish', to: 'draft', also: ['stopServing'], context: { publishedVersionId: null, changedFields: [] } },
  { from: 'draft', event: publish(3), condition: 'republish after unpublish', to: 'published', via: [publish(1), unpublish], also: ['freezeVersion', 'goLive'], context: { publishedVersionId: 3 } },
]

const refused: RefusedRow<AgentPublicationEvent>[] = [
  { from: 'draft', event: unpublish, condition: 'nothing published', says: 'no published version' },
  { from: 'draft', event: unpublish, condition: 'unpublished already', via: [publish(1), unpublish] },
]

describe('agent publication: transitions', () => transitions(h, rows))
describe('agent publication: refused moves', () => refusals(h, refused))

describe('agent publication: other moves', () => {
  test('edits to a draft-only agent change nothing', () => expectInert(reach(h, 'draft'), edit('instructions')))
  test('rollback applies in every state', () => {
    for (const s of ['draft', 'published', 'publishedWithChanges'] as const) expect(canApply(s, 'agent.rollback')).toEqual({ ok: true })
  })
  test('status view', () => {
    expect(publicationStatus(reach(h, 'publishedWithChanges').actor.getSnapshot())).toEqual({
      status: 'published',
      publishedVersionId: 1,
      lastPublishedAt: T0 + 1,
      hasUnpublishedChanges: true,
      changedFields: ['instructions'],
    })
    expect(publicationStatus(reach(h, 'draft').actor.getSnapshot())).toMatchObject({ status: 'draft', hasUnpublishedChanges: false })
  })
})

describe('agent publication: snapshots', () => roundTrips(h))
