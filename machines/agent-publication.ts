/**
 * Agent publication, legacy (SPEC.md "Agent publication (legacy)" and Versioning): a new agent is
 * draft only; publish freezes a version and serves it; edits after that make "published with
 * unpublished changes"; unpublish stops serving; rollback (from any state) backs up the current
 * agent, restores a version onto it and publishes; a checkpoint stores a version and changes
 * nothing else.
 *
 * Version ids come in the events: the service allocates them (the chart makes up no ids) and the
 * named effects write the versions: `freezeVersion` (snapshot → new version `versionId`),
 * `goLive` (live chat and voice use it), `stopServing`, `backupCurrent`, `restoreVersion`,
 * `storeCheckpoint`.
 *
 * Not shown in SPEC.md, chosen here:
 * - Edits to a draft-only agent change nothing here (there is no published version to differ
 *   from); `changedFields` is the union of panels edited since the last publish.
 * - Unpublish of a draft-only agent is refused (409 naming `draft`).
 * - Rollback always ends `published` with no unpublished changes, even from draft.
 * - Publishing while published without changes is allowed and makes a new version live.
 * - Promotion between environments is a version-store matter, not a move of this chart.
 */
import { assign, setup, type SnapshotFrom } from 'xstate'
import { canApplyOn, refusalOf, type CanApply, type Refusal, type RefusalParams } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. */
export const MACHINE_VERSION = 1

export type AgentPublicationState = 'draft' | 'published' | 'publishedWithChanges'

export interface AgentPublicationContext {
  agentId: string
  publishedVersionId: number | null
  lastPublishedAt: number | null
  /** Panels that differ between the draft and the published version. */
  changedFields: string[]
  /** The version the last rollback restored. */
  restoredFromVersionId: number | null
  lastCheckpointVersionId: number | null
  lastRefusal: Refusal | null
}

export interface AgentPublicationInput {
  agentId: string
}

export type AgentPublicationEvent =
  | { type: 'agent.publish'; at: number; versionId: number }
  | { type: 'agent.edit'; at: number; changedFields: string[] }
  | { type: 'agent.unpublish'; at: number }
  | { type: 'agent.rollback'; at: number; toVersionId: number; backupVersionId: number; versionId: number }
  | { type: 'agent.checkpoint'; at: number; versionId: number }

/** Effects the runtime implements with `machine.provide({ actions })`. */
export const AGENT_PUBLICATION_EFFECTS = [
  'freezeVersion',
  'goLive',
  'stopServing',
  'backupCurrent',
  'restoreVersion',
  'storeCheckpoint',
] as const
export type AgentPublicationEffect = (typeof AGENT_PUBLICATION_EFFECTS)[number]

const noop = () => {}

export const agentPublicationMachine = setup({
  types: {
    context: {} as AgentPublicationContext,
    events: {} as AgentPublicationEvent,
    input: {} as AgentPublicationInput,
  },
  actions: {
    freezeVersion: noop,
    goLive: noop,
    stopServing: noop,
    backupCurrent: noop,
    restoreVersion: noop,
    storeCheckpoint: noop,
    markPublished: assign(({ context, event }) => ({
      publishedVersionId:
        event.type === 'agent.publish' || event.type === 'agent.rollback' ? event.versionId : context.publishedVersionId,
      lastPublishedAt: event.at,
      changedFields: [],
    })),
    markRestored: assign({
      restoredFromVersionId: ({ context, event }) =>
        event.type === 'agent.rollback' ? event.toVersionId : context.restoredFromVersionId,
    }),
    addChangedFields: assign({
      changedFields: ({ context, event }) =>
        event.type === 'agent.edit' && Array.isArray(event.changedFields)
          ? [...new Set([...context.changedFields, ...event.changedFields])]
          : context.changedFields,
    }),
    markUnpublished: assign({ publishedVersionId: () => null, changedFields: () => [] }),
    markCheckpoint: assign({
      lastCheckpointVersionId: ({ context, event }) =>
        event.type === 'agent.checkpoint' ? event.versionId : context.lastCheckpointVersionId,
    }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
}).createMachine({
  id: 'agentPublication',
  description: "An agent's publication: what live chat and voice are served.",
  context: ({ input }) => ({
    agentId: input.agentId,
    publishedVersionId: null,
    lastPublishedAt: null,
    changedFields: [],
    restoredFromVersionId: null,
    lastCheckpointVersionId: null,
    lastRefusal: null,
  }),
  initial: 'draft',
  // Rows whose "from" is "any".
  on: {
    'agent.rollback': {
      target: '.published',
      // In this order: back up, restore, then the automatic publish.
      actions: ['backupCurrent', 'restoreVersion', 'markRestored', 'freezeVersion', 'goLive', 'markPublished'],
    },
    'agent.checkpoint': { actions: ['storeCheckpoint', 'markCheckpoint'] },
  },
  states: {
    draft: {
      description: 'Draft only: not used for live chat or voice until published.',
      on: {
        'agent.publish': { target: 'published', actions: ['freezeVersion', 'goLive', 'markPublished'] },
        'agent.unpublish': {
          actions: {
            type: 'recordRefusal',
            params: { state: 'draft', message: 'agent is draft only; there is no published version to unpublish' },
          },
        },
      },
    },
    published: {
      description: 'A frozen version serves live conversations; the draft equals it.',
      on: {
        'agent.publish': { target: 'published', actions: ['freezeVersion', 'goLive', 'markPublished'] },
        'agent.edit': { target: 'publishedWithChanges', actions: 'addChangedFields' },
        'agent.unpublish': { target: 'draft', actions: ['stopServing', 'markUnpublished'] },
      },
    },
    publishedWithChanges: {
      description: 'Published, with draft edits not yet published (has_unpublished_changes: true).',
      on: {
        'agent.publish': { target: 'published', actions: ['freezeVersion', 'goLive', 'markPublished'] },
        'agent.edit': { actions: 'addChangedFields' },
        'agent.unpublish': { target: 'draft', actions: ['stopServing', 'markUnpublished'] },
      },
    },
  },
})

export type AgentPublicationSnapshot = SnapshotFrom<typeof agentPublicationMachine>

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(
  target: AgentPublicationSnapshot | AgentPublicationState,
  event: AgentPublicationEvent | AgentPublicationEvent['type'],
): CanApply {
  return canApplyOn(agentPublicationMachine, target, event)
}

/** GET /agents/{id}/status from a snapshot (the route renames to snake_case). */
export function publicationStatus(s: AgentPublicationSnapshot) {
  return {
    status: s.value === 'draft' ? ('draft' as const) : ('published' as const),
    publishedVersionId: s.context.publishedVersionId,
    lastPublishedAt: s.context.lastPublishedAt,
    hasUnpublishedChanges: s.value === 'publishedWithChanges',
    changedFields: s.context.changedFields,
  }
}
