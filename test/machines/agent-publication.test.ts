import { describe, expect, test } from 'bun:test'
import { type AnyActorLogic, fromPromise } from 'xstate'
import { AGENT_PUBLICATION_EFFECTS, type AgentPublicationEvent, agentPublicationMachine, canApply, type EffectInput, publicationStatus } from '../../machines/agent-publication'
import { machines } from '../../machines/index'
import { until } from '../support/until'
import { expectInert, type Fakes, type Harness, type RefusedRow, type Row, reachSettled, refusals, restore, roundTrips, settle, starts, transitions } from './table'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const by = 'key_1'
const publish = (versionId: number, at = T0 + versionId): AgentPublicationEvent => ({
  type: 'agent.publish',
  at,
  versionId,
  commandId: `publish-${versionId}`,
  by,
  changeSummary: null,
})
const edit = (...changedFields: string[]): AgentPublicationEvent => ({ type: 'agent.edit', at: T0 + 50, changedFields })
const unpublish: AgentPublicationEvent = { type: 'agent.unpublish', at: T0 + 60, commandId: 'unpublish', by }
/** After publish(1): back up as 2, restore 1, publish as 3. */
const rollback: AgentPublicationEvent = { type: 'agent.rollback', at: T0 + 70, commandId: 'rollback', by, toVersionId: 1, backupVersionId: 2, versionId: 3 }
const checkpoint = (versionId: number): AgentPublicationEvent => ({
  type: 'agent.checkpoint',
  at: T0 + 80,
  commandId: `checkpoint-${versionId}`,
  by,
  versionId,
  label: 'before launch',
  environment: 'staging',
  changeSummary: 'safe point',
})
const ROLLBACK_EFFECTS = ['backupCurrent', 'restoreVersion', 'freezeVersion', 'goLive']
const ROLLBACK_STATES = ['backingUp', 'restoring', 'freezing', 'goingLive']
const afterRollback = { publishedVersionId: 3, restoredFromVersionId: 1, lastPublishedAt: T0 + 70, changedFields: [], lastVersionId: 3, pending: null }

const h: Harness<AgentPublicationEvent> = {
  machine: agentPublicationMachine,
  effects: AGENT_PUBLICATION_EFFECTS,
  invokes: AGENT_PUBLICATION_EFFECTS,
  input: { agentId: 'ag_1', workspaceId: 'ws_1' },
  canApply,
  paths: {
    draft: [],
    published: [publish(1)],
    publishedWithChanges: [publish(1), edit('core')],
  },
}
/** A draft that has a version 1 (a checkpoint), so a rollback from draft has a target. */
const draftWithVersion = [checkpoint(1)]

/**
 * Fakes that record each call with its input, and can fail (`failing`) or wait until released
 * (`held`): what the effect tests below assert on.
 */
function recording() {
  const calls: { name: string; input: EffectInput }[] = []
  const failing = new Map<string, string>()
  const held = new Map<string, () => void>()
  const gates = new Map<string, Promise<void>>()
  const hold = (name: string) => gates.set(name, new Promise<void>((go) => held.set(name, go)))
  const fakes: Fakes = (log) =>
    Object.fromEntries(
      AGENT_PUBLICATION_EFFECTS.map((name): [string, AnyActorLogic] => [
        name,
        fromPromise<void, EffectInput>(async ({ input }) => {
          log.push(name)
          calls.push({ name, input: structuredClone(input) })
          await gates.get(name)
          const failure = failing.get(name)
          if (failure) throw new Error(failure)
        }),
      ]),
    )
  return { calls, failing, hold, release: (name: string) => held.get(name)?.(), fakes }
}

describe('agent publication: created', () => {
  starts(h, [{ name: 'new agent', input: h.input, to: 'draft', context: { agentId: 'ag_1', workspaceId: 'ws_1', publishedVersionId: null, lastVersionId: 0, changedFields: [] } }])
})

// docs/spec.md "Agent publication (legacy)", row by row ("any" expanded to every resting state).
const rows: Row<AgentPublicationEvent>[] = [
  {
    from: 'draft',
    event: publish(1),
    condition: 'POST publish',
    through: ['freezing', 'goingLive'],
    to: 'published',
    also: ['freezeVersion', 'goLive'],
    context: { publishedVersionId: 1, lastPublishedAt: T0 + 1, lastVersionId: 1, lastCommandId: 'publish-1' },
  },
  { from: 'published', event: edit('core', 'voice'), condition: 'edits', to: 'publishedWithChanges', context: { changedFields: ['core', 'voice'] } },
  {
    from: 'published',
    event: publish(2),
    condition: 'POST publish',
    through: ['freezing', 'goingLive'],
    to: 'published',
    also: ['freezeVersion', 'goLive'],
    context: { publishedVersionId: 2, lastPublishedAt: T0 + 2 },
  },
  {
    from: 'published',
    event: unpublish,
    condition: 'POST unpublish',
    through: ['unpublishing'],
    to: 'draft',
    also: ['stopServing'],
    context: { publishedVersionId: null, lastPublishedAt: T0 + 1, pending: null },
  },
  { from: 'draft', event: rollback, condition: 'any: POST rollback', via: draftWithVersion, through: ROLLBACK_STATES, to: 'published', also: ROLLBACK_EFFECTS, context: afterRollback },
  { from: 'published', event: rollback, condition: 'any: POST rollback', through: ROLLBACK_STATES, to: 'published', also: ROLLBACK_EFFECTS, context: afterRollback },
  { from: 'publishedWithChanges', event: rollback, condition: 'any: POST rollback', through: ROLLBACK_STATES, to: 'published', also: ROLLBACK_EFFECTS, context: afterRollback },
  {
    from: 'draft',
    event: checkpoint(1),
    condition: 'any: POST versions',
    through: ['checkpointing'],
    to: 'draft',
    also: ['storeCheckpoint'],
    context: { lastCheckpointVersionId: 1, lastVersionId: 1, publishedVersionId: null },
  },
  {
    from: 'published',
    event: checkpoint(2),
    condition: 'any: POST versions',
    through: ['checkpointing'],
    to: 'published',
    also: ['storeCheckpoint'],
    context: { lastCheckpointVersionId: 2, publishedVersionId: 1 },
  },
  {
    from: 'publishedWithChanges',
    event: checkpoint(2),
    condition: 'any: POST versions',
    through: ['checkpointing'],
    to: 'publishedWithChanges',
    also: ['storeCheckpoint'],
    context: { lastCheckpointVersionId: 2, changedFields: ['core'] },
  },
  // Implied rows.
  { from: 'publishedWithChanges', event: edit('voice', 'core'), condition: 'more edits', to: 'publishedWithChanges', context: { changedFields: ['core', 'voice'] } },
  { from: 'publishedWithChanges', event: edit(), condition: 'edited back to the published draft', to: 'published', context: { changedFields: [] } },
  {
    from: 'publishedWithChanges',
    event: publish(2),
    condition: 'POST publish',
    through: ['freezing', 'goingLive'],
    to: 'published',
    also: ['freezeVersion', 'goLive'],
    context: { publishedVersionId: 2, changedFields: [] },
  },
  {
    from: 'publishedWithChanges',
    event: unpublish,
    condition: 'POST unpublish',
    through: ['unpublishing'],
    to: 'draft',
    also: ['stopServing'],
    context: { publishedVersionId: null, changedFields: [] },
  },
  {
    from: 'draft',
    event: publish(2),
    condition: 'republish after unpublish',
    via: [publish(1), unpublish],
    through: ['freezing', 'goingLive'],
    to: 'published',
    also: ['freezeVersion', 'goLive'],
    context: { publishedVersionId: 2 },
  },
]

const refused: RefusedRow<AgentPublicationEvent>[] = [
  { from: 'draft', event: unpublish, condition: 'nothing published', says: 'no published version' },
  { from: 'draft', event: unpublish, condition: 'unpublished already', via: [publish(1), unpublish] },
]

describe('agent publication: transitions', () => transitions(h, rows))
describe('agent publication: refused moves', () => refusals(h, refused))

describe('agent publication: effects, with fakes that record calls', () => {
  test('rollback runs backup, restore, freeze, go-live in that order, each with the command', async () => {
    const r = recording()
    const { actor, log } = await reachSettled(h, 'publishedWithChanges', { fakes: r.fakes })
    r.calls.length = 0
    actor.send(rollback)
    await settle(actor)
    expect(log).toEqual(ROLLBACK_EFFECTS)
    expect(r.calls.map((c) => [c.name, c.input.pending.backupVersionId, c.input.pending.toVersionId, c.input.pending.versionId])).toEqual([
      ['backupCurrent', 2, 1, 3],
      ['restoreVersion', 2, 1, 3],
      ['freezeVersion', 2, 1, 3],
      ['goLive', 2, 1, 3],
    ])
    for (const c of r.calls) expect(c.input).toMatchObject({ agentId: 'ag_1', workspaceId: 'ws_1', pending: { command: 'rollback', by, at: T0 + 70, from: 'publishedWithChanges' } })
    expect(r.calls[2].input.pending.restored).toBe(true)
  })

  test('publish hands the effects the version number, summary and author', async () => {
    const r = recording()
    const { actor } = await reachSettled(h, 'draft', { fakes: r.fakes })
    actor.send({ ...publish(1), changeSummary: 'first' } as AgentPublicationEvent)
    await settle(actor)
    expect(r.calls[0].input.pending).toMatchObject({ command: 'publish', versionId: 1, changeSummary: 'first', by, from: 'draft' })
  })

  test('checkpoint hands the effect its label and environment', async () => {
    const r = recording()
    const { actor } = await reachSettled(h, 'published', { fakes: r.fakes })
    r.calls.length = 0
    actor.send(checkpoint(2))
    await settle(actor)
    expect(r.calls[0].input.pending).toMatchObject({ command: 'checkpoint', versionId: 2, label: 'before launch', environment: 'staging', changeSummary: 'safe point' })
  })

  test('a failed freeze goes back where the publish started and records the failure', async () => {
    const r = recording()
    const { actor, log } = await reachSettled(h, 'publishedWithChanges', { fakes: r.fakes })
    r.failing.set('freezeVersion', 'store down')
    actor.send(publish(2))
    await settle(actor)
    const snap = actor.getSnapshot()
    expect(snap.value).toBe('publishedWithChanges')
    expect(log).toEqual(['freezeVersion'])
    expect(snap.context).toMatchObject({ publishedVersionId: 1, pending: null, lastFailure: { commandId: 'publish-2', command: 'publish', message: 'store down' } })
  })

  test('a rollback failing after the restore leaves a published agent with unpublished changes', async () => {
    const r = recording()
    const { actor } = await reachSettled(h, 'published', { fakes: r.fakes })
    r.failing.set('goLive', 'store down')
    actor.send(rollback)
    await settle(actor)
    expect(actor.getSnapshot().value).toBe('publishedWithChanges')
    expect(actor.getSnapshot().context).toMatchObject({ publishedVersionId: 1, lastFailure: { commandId: 'rollback' } })
  })

  test('a failed backup changes nothing: the restore never runs', async () => {
    const r = recording()
    const { actor, log } = await reachSettled(h, 'published', { fakes: r.fakes })
    r.failing.set('backupCurrent', 'store down')
    actor.send(rollback)
    await settle(actor)
    expect(actor.getSnapshot().value).toBe('published')
    expect(log).toEqual(['backupCurrent'])
  })

  test('commands are not taken while an effect is running', async () => {
    const r = recording()
    const { actor } = await reachSettled(h, 'published', { fakes: r.fakes })
    r.hold('freezeVersion')
    actor.send(publish(2))
    expect(actor.getSnapshot().value).toBe('freezing')
    const during = actor.getSnapshot().context
    for (const e of [publish(3), unpublish, checkpoint(3), edit('core')]) actor.send(e)
    expect(actor.getSnapshot().context).toEqual(during)
    expect(canApply(actor.getSnapshot(), 'agent.publish')).toMatchObject({ ok: false, state: 'freezing' })
    r.release('freezeVersion')
    await settle(actor)
    expect(actor.getSnapshot().context).toMatchObject({ publishedVersionId: 2, lastCommandId: 'publish-2' })
  })

  test('a crash mid-effect: the restored actor re-runs the effect with the same input', async () => {
    const r = recording()
    const { actor } = await reachSettled(h, 'published', { fakes: r.fakes })
    r.hold('restoreVersion')
    actor.send(rollback)
    await until(
      'the held restore to start',
      async () => r.calls.at(-1)?.name,
      (name) => name === 'restoreVersion',
    )
    expect(actor.getSnapshot().value).toBe('restoring')
    const inFlight = r.calls.at(-1)!
    const again = recording()
    const log: string[] = []
    // The stored snapshot records the running effect; the old process is gone.
    const restored = restore(h, actor, log, again.fakes)
    actor.stop()
    await settle(restored)
    expect(log).toEqual(['restoreVersion', 'freezeVersion', 'goLive'])
    expect(again.calls[0].input).toEqual(inFlight.input)
    expect(restored.getSnapshot().value).toBe('published')
    expect(restored.getSnapshot().context).toMatchObject(afterRollback)
  })
})

describe('agent publication: numbers and other moves', () => {
  test('edits to a draft-only agent change nothing', async () => expectInert(await reachSettled(h, 'draft'), edit('core')))
  test('an edit with no differing panel changes nothing while published', async () => expectInert(await reachSettled(h, 'published'), edit()))
  test('a publish with a number that is not the next one is not taken', async () => {
    await expectInert(await reachSettled(h, 'published'), publish(1))
    await expectInert(await reachSettled(h, 'published'), publish(5))
  })
  test('a rollback must back up and publish as the next two numbers, to an existing version', async () => {
    await expectInert(await reachSettled(h, 'published'), { ...rollback, backupVersionId: 3, versionId: 4 } as AgentPublicationEvent)
    await expectInert(await reachSettled(h, 'published'), { ...rollback, toVersionId: 2 } as AgentPublicationEvent)
    await expectInert(await reachSettled(h, 'draft'), { ...rollback, toVersionId: 0, backupVersionId: 1, versionId: 2 } as AgentPublicationEvent)
  })
  test('rollback and checkpoint apply in every resting state', () => {
    for (const s of ['draft', 'published', 'publishedWithChanges'] as const) {
      expect(canApply(s, 'agent.rollback')).toEqual({ ok: true })
      expect(canApply(s, 'agent.checkpoint')).toEqual({ ok: true })
    }
  })
  test('status view, also while an effect runs', async () => {
    const r = recording()
    const s = await reachSettled(h, 'publishedWithChanges', { fakes: r.fakes })
    const snap = s.actor.getSnapshot()
    expect(publicationStatus(snap.value, snap.context)).toEqual({
      status: 'published',
      resting: 'publishedWithChanges',
      publishedVersionId: 1,
      lastPublishedAt: T0 + 1,
      hasUnpublishedChanges: true,
      changedFields: ['core'],
    })
    const d = (await reachSettled(h, 'draft')).actor.getSnapshot()
    expect(publicationStatus(d.value, d.context)).toMatchObject({ status: 'draft', hasUnpublishedChanges: false })
    r.hold('storeCheckpoint')
    s.actor.send(checkpoint(2))
    const busy = s.actor.getSnapshot()
    expect(busy.value).toBe('checkpointing')
    expect(publicationStatus(busy.value, busy.context)).toMatchObject({ status: 'published', hasUnpublishedChanges: true })
    r.release('storeCheckpoint')
  })
  test('the registry lists the invoked effects and version 2', () => {
    expect(machines.agentPublication.effects).toEqual(AGENT_PUBLICATION_EFFECTS)
    expect(machines.agentPublication.version).toBe(2)
  })
})

describe('agent publication: snapshots', () => roundTrips(h))
