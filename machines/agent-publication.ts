/**
 * Agent publication, legacy (docs/spec.md "Agent publication (legacy)" and Versioning rules 2–5): a new
 * agent is draft only; publish freezes a version and serves it; edits after that make "published
 * with unpublished changes"; unpublish stops serving; rollback (from any state) backs up the
 * current agent, restores a version onto it and publishes; a checkpoint stores a version and
 * changes nothing else.
 *
 * Effects are invoked actors (docs/design.md: the chart stays pure), bound in the versions feature's actor.ts.
 * Each runs in a short effect state between the resting states, because what comes next depends
 * on its outcome, and in docs/spec.md's order:
 *   publish     draft|published|publishedWithChanges → freezing → goingLive → published
 *   rollback    any → backingUp → restoring → freezing → goingLive → published
 *   checkpoint  any → checkpointing → back to where it was
 *   unpublish   published|publishedWithChanges → unpublishing → draft
 * The command being carried out is kept in `context.pending` (persisted), so an effect re-run
 * after a crash gets the same input; effects are idempotent for that reason.
 *
 * Version numbers come in the events: the service proposes `lastVersionId + 1` (and `+ 2` for a
 * rollback's publish) and the chart accepts only the next numbers, so two commands racing for one
 * number cannot both win; the loser's event is ignored and the service retries with fresh numbers.
 * Every command carries a `commandId`, recorded on acceptance and on failure, so the sender knows
 * whether its own event was taken and how it ended.
 *
 * Not shown in docs/spec.md, chosen here:
 * - Edits to a draft-only agent change nothing here (there is no published version to differ from).
 * - An edit event carries the panels that differ from the published snapshot *now* (the service
 *   compares snapshots); an edit that brings the draft back to the published one returns to `published`.
 * - Unpublish of a draft-only agent is refused (409 naming `draft`).
 * - Rollback always ends `published` with no unpublished changes, even from draft.
 * - Publishing while published without changes is allowed and makes a new version live.
 * - Commands that arrive while an effect is running are not taken (the service waits and retries).
 * - A failed effect returns to the resting state the command started from (or to
 *   `publishedWithChanges` when a rollback had already restored the draft), with `lastFailure` set.
 * - Promotion between environments is a version-store matter, not a move of this chart.
 */
import { assign, fromPromise, type SnapshotFrom, setup } from 'xstate'
import { type CanApply, canApplyOn, type Refusal, type RefusalParams, refusalOf } from './refusal'

/** Bump when the chart changes shape: persisted snapshots carry it. 2: effects became invoked actors. */
export const MACHINE_VERSION = 2

export const RESTING_STATES = ['draft', 'published', 'publishedWithChanges'] as const
export type RestingState = (typeof RESTING_STATES)[number]
export type EffectState = 'backingUp' | 'restoring' | 'freezing' | 'goingLive' | 'checkpointing' | 'unpublishing'
export type AgentPublicationState = RestingState | EffectState

/** The command the effect states are carrying out. */
export interface PendingCommand {
  command: 'publish' | 'rollback' | 'checkpoint' | 'unpublish'
  commandId: string
  /** The resting state it was accepted in. */
  from: RestingState
  at: number
  /** Who asked (the API key id). */
  by: string
  /** publish and rollback: the version made live; checkpoint: the version stored. */
  versionId: number | null
  /** rollback: the backup of the agent as it was. */
  backupVersionId: number | null
  /** rollback: the version restored onto the agent. */
  toVersionId: number | null
  /** rollback: set once the target snapshot is on the agent. */
  restored: boolean
  label: string | null
  environment: string | null
  changeSummary: string | null
}

export interface AgentPublicationContext {
  agentId: string
  workspaceId: string
  publishedVersionId: number | null
  lastPublishedAt: number | null
  /** Panels that differ between the draft and the published version. */
  changedFields: string[]
  /** The highest version number accepted; the next command must use the numbers after it. */
  lastVersionId: number
  /** The version the last rollback restored. */
  restoredFromVersionId: number | null
  lastCheckpointVersionId: number | null
  pending: PendingCommand | null
  lastCommandId: string | null
  lastFailure: { commandId: string; command: PendingCommand['command']; at: number; message: string } | null
  lastRefusal: Refusal | null
}

export interface AgentPublicationInput {
  agentId: string
  workspaceId: string
}

type Command = { at: number; commandId: string; by: string }
export type AgentPublicationEvent =
  | ({ type: 'agent.publish'; versionId: number; changeSummary: string | null } & Command)
  | { type: 'agent.edit'; at: number; changedFields: string[] }
  | ({ type: 'agent.unpublish' } & Command)
  | ({ type: 'agent.rollback'; toVersionId: number; backupVersionId: number; versionId: number } & Command)
  | ({ type: 'agent.checkpoint'; versionId: number; label: string | null; environment: string; changeSummary: string | null } & Command)

/** What every effect receives: the agent and the command (all persisted, so a re-run sees the same). */
export interface EffectInput {
  agentId: string
  workspaceId: string
  pending: PendingCommand
}

/** Effects: invoked actors the runtime provides with `machine.provide({ actors })`. */
export const AGENT_PUBLICATION_EFFECTS = ['backupCurrent', 'restoreVersion', 'freezeVersion', 'goLive', 'storeCheckpoint', 'stopServing'] as const
export type AgentPublicationEffect = (typeof AGENT_PUBLICATION_EFFECTS)[number]

const provided = (name: AgentPublicationEffect) =>
  fromPromise<void, EffectInput>(async () => {
    throw new Error(`${name} is provided by the versions binding`)
  })

const effectInput = ({ context }: { context: AgentPublicationContext }): EffectInput => {
  if (!context.pending) throw new Error('an effect state was entered without a pending command')
  return { agentId: context.agentId, workspaceId: context.workspaceId, pending: context.pending }
}

function pendingOf(event: AgentPublicationEvent, from: RestingState): PendingCommand | null {
  if (event.type === 'agent.edit') return null
  const base = { commandId: event.commandId, from, at: event.at, by: event.by, restored: false }
  const none = { versionId: null, backupVersionId: null, toVersionId: null, label: null, environment: null, changeSummary: null }
  switch (event.type) {
    case 'agent.publish':
      return { ...base, ...none, command: 'publish', versionId: event.versionId, changeSummary: event.changeSummary }
    case 'agent.unpublish':
      return { ...base, ...none, command: 'unpublish' }
    case 'agent.rollback':
      return { ...base, ...none, command: 'rollback', versionId: event.versionId, backupVersionId: event.backupVersionId, toVersionId: event.toVersionId }
    case 'agent.checkpoint':
      return { ...base, ...none, command: 'checkpoint', versionId: event.versionId, label: event.label, environment: event.environment, changeSummary: event.changeSummary }
  }
}

const fromIs =
  (state: RestingState) =>
  ({ context }: { context: AgentPublicationContext }) =>
    context.pending?.from === state

/** Where a failed effect leaves the agent: where the command started, unless the draft was already restored. */
const afterFailure = [
  { guard: 'restoredOverPublished', target: 'publishedWithChanges', actions: 'recordFailure' },
  { guard: 'fromDraft', target: 'draft', actions: 'recordFailure' },
  { guard: 'fromChanges', target: 'publishedWithChanges', actions: 'recordFailure' },
  { target: 'published', actions: 'recordFailure' },
] as const

/** Back to where a checkpoint started: it changes no state. */
const backToFrom = [
  { guard: 'fromDraft', target: 'draft', actions: 'markCheckpoint' },
  { guard: 'fromChanges', target: 'publishedWithChanges', actions: 'markCheckpoint' },
  { target: 'published', actions: 'markCheckpoint' },
] as const

/** An agent nothing has been asked of yet: draft only, no versions. */
export function initialContext(input: AgentPublicationInput): AgentPublicationContext {
  return {
    agentId: input.agentId,
    workspaceId: input.workspaceId,
    publishedVersionId: null,
    lastPublishedAt: null,
    changedFields: [],
    lastVersionId: 0,
    restoredFromVersionId: null,
    lastCheckpointVersionId: null,
    pending: null,
    lastCommandId: null,
    lastFailure: null,
    lastRefusal: null,
  }
}

export const agentPublicationMachine = setup({
  types: {
    context: {} as AgentPublicationContext,
    events: {} as AgentPublicationEvent,
    input: {} as AgentPublicationInput,
  },
  actors: {
    backupCurrent: provided('backupCurrent'),
    restoreVersion: provided('restoreVersion'),
    freezeVersion: provided('freezeVersion'),
    goLive: provided('goLive'),
    storeCheckpoint: provided('storeCheckpoint'),
    stopServing: provided('stopServing'),
  },
  guards: {
    nextNumber: ({ context, event }) => (event.type === 'agent.publish' || event.type === 'agent.checkpoint') && event.versionId === context.lastVersionId + 1,
    nextNumbers: ({ context, event }) =>
      event.type === 'agent.rollback' &&
      event.backupVersionId === context.lastVersionId + 1 &&
      event.versionId === context.lastVersionId + 2 &&
      event.toVersionId >= 1 &&
      event.toVersionId <= context.lastVersionId,
    hasChanges: ({ event }) => event.type === 'agent.edit' && event.changedFields.length > 0,
    fromDraft: fromIs('draft'),
    fromChanges: fromIs('publishedWithChanges'),
    restoredOverPublished: ({ context }) => context.pending?.restored === true && context.publishedVersionId !== null,
  },
  actions: {
    accept: assign(({ context, event }, params: { from: RestingState }) => {
      const pending = pendingOf(event, params.from)
      if (!pending) return {}
      const numbers = [pending.versionId, pending.backupVersionId].filter((n): n is number => n !== null)
      return { pending, lastCommandId: pending.commandId, lastVersionId: Math.max(context.lastVersionId, ...numbers) }
    }),
    markRestored: assign({ pending: ({ context }) => (context.pending ? { ...context.pending, restored: true } : null) }),
    markPublished: assign(({ context }) => ({
      publishedVersionId: context.pending?.versionId ?? context.publishedVersionId,
      lastPublishedAt: context.pending?.at ?? context.lastPublishedAt,
      restoredFromVersionId: context.pending?.command === 'rollback' ? context.pending.toVersionId : context.restoredFromVersionId,
      changedFields: [],
      pending: null,
    })),
    markUnpublished: assign({ publishedVersionId: () => null, changedFields: () => [], pending: () => null }),
    markCheckpoint: assign(({ context }) => ({ lastCheckpointVersionId: context.pending?.versionId ?? context.lastCheckpointVersionId, pending: null })),
    setChangedFields: assign({
      changedFields: ({ context, event }) => (event.type === 'agent.edit' ? [...new Set(event.changedFields)].sort() : context.changedFields),
    }),
    recordFailure: assign(({ context, event }) => {
      const p = context.pending
      const error = (event as { error?: unknown }).error
      const message = error instanceof Error ? error.message : String(error)
      return { pending: null, lastFailure: p ? { commandId: p.commandId, command: p.command, at: p.at, message } : context.lastFailure }
    }),
    recordRefusal: assign((args, params: RefusalParams) => ({ lastRefusal: refusalOf(args.event, params) })),
  },
}).createMachine({
  id: 'agentPublication',
  description: "An agent's publication: which frozen version live chat and voice are served.",
  context: ({ input }) => initialContext(input),
  initial: 'draft',
  states: {
    draft: {
      description: 'Draft only: not used for live chat or voice until published.',
      on: {
        ...anyState('draft'),
        'agent.publish': { guard: 'nextNumber', target: 'freezing', actions: { type: 'accept', params: { from: 'draft' } } },
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
        ...anyState('published'),
        'agent.publish': { guard: 'nextNumber', target: 'freezing', actions: { type: 'accept', params: { from: 'published' } } },
        'agent.edit': { guard: 'hasChanges', target: 'publishedWithChanges', actions: 'setChangedFields' },
        'agent.unpublish': { target: 'unpublishing', actions: { type: 'accept', params: { from: 'published' } } },
      },
    },
    publishedWithChanges: {
      description: 'Published, with draft edits not yet published (has_unpublished_changes: true).',
      on: {
        ...anyState('publishedWithChanges'),
        'agent.publish': { guard: 'nextNumber', target: 'freezing', actions: { type: 'accept', params: { from: 'publishedWithChanges' } } },
        'agent.edit': [
          { guard: 'hasChanges', actions: 'setChangedFields' },
          // The draft was edited back to what is published.
          { target: 'published', actions: 'setChangedFields' },
        ],
        'agent.unpublish': { target: 'unpublishing', actions: { type: 'accept', params: { from: 'publishedWithChanges' } } },
      },
    },
    backingUp: {
      description: 'Rollback, step 1: the agent as it is now is saved as a backup version.',
      invoke: { id: 'backupCurrent', src: 'backupCurrent', input: effectInput, onDone: 'restoring', onError: afterFailure },
    },
    restoring: {
      description: "Rollback, step 2: the target version's snapshot is written onto the agent.",
      invoke: { id: 'restoreVersion', src: 'restoreVersion', input: effectInput, onDone: { target: 'freezing', actions: 'markRestored' }, onError: afterFailure },
    },
    freezing: {
      description: "Publish (or rollback, step 3): the agent's current draft is frozen as a new version.",
      invoke: { id: 'freezeVersion', src: 'freezeVersion', input: effectInput, onDone: 'goingLive', onError: afterFailure },
    },
    goingLive: {
      description: 'The frozen version becomes the one live chat and voice are served.',
      invoke: { id: 'goLive', src: 'goLive', input: effectInput, onDone: { target: 'published', actions: 'markPublished' }, onError: afterFailure },
    },
    checkpointing: {
      description: 'A checkpoint: a snapshot is stored as a version without publishing; the state does not change.',
      invoke: { id: 'storeCheckpoint', src: 'storeCheckpoint', input: effectInput, onDone: backToFrom, onError: afterFailure },
    },
    unpublishing: {
      description: 'The live version stops being served; the agent becomes draft only.',
      invoke: { id: 'stopServing', src: 'stopServing', input: effectInput, onDone: { target: 'draft', actions: 'markUnpublished' }, onError: afterFailure },
    },
  },
})

/** Rows whose "from" is "any" resting state: rollback and checkpoint. */
function anyState(from: RestingState) {
  return {
    'agent.rollback': { guard: 'nextNumbers', target: 'backingUp', actions: { type: 'accept', params: { from } } },
    'agent.checkpoint': { guard: 'nextNumber', target: 'checkpointing', actions: { type: 'accept', params: { from } } },
  } as const
}

export type AgentPublicationSnapshot = SnapshotFrom<typeof agentPublicationMachine>

export const isResting = (state: unknown): state is RestingState => (RESTING_STATES as readonly unknown[]).includes(state)

/** Would this move apply? `{ ok: false }` carries the state a 409 must name. */
export function canApply(target: AgentPublicationSnapshot | AgentPublicationState, event: AgentPublicationEvent | AgentPublicationEvent['type']): CanApply {
  return canApplyOn(agentPublicationMachine, target, event)
}

/**
 * GET /agents/{id}/status from the chart's state and context (the route renames to snake_case).
 * While an effect runs, the agent is still where the command started.
 */
export function publicationStatus(state: unknown, context: AgentPublicationContext) {
  const resting: RestingState = isResting(state) ? state : (context.pending?.from ?? 'draft')
  return {
    status: resting === 'draft' ? ('draft' as const) : ('published' as const),
    resting,
    publishedVersionId: context.publishedVersionId,
    lastPublishedAt: context.lastPublishedAt,
    hasUnpublishedChanges: resting === 'publishedWithChanges',
    changedFields: context.changedFields,
  }
}
