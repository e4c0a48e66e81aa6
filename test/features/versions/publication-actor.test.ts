/**
 * The agent-publication actor on the real runtime, store and version store, with the agent and
 * its knowledge faked: effects write versions and serve them, re-run safely, and an effect in
 * flight when the process dies runs again at the next boot.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import pino from 'pino'
import type { EffectInput, PendingCommand } from '../../../machines/agent-publication'
import { ManualClock } from '../../../src/clock'
import { newAgentDoc } from '../../../src/features/agents/defaults'
import type { AgentDoc } from '../../../src/features/agents/repository'
import { agentPublicationKind } from '../../../src/features/versions/actor'
import { DraftReader } from '../../../src/features/versions/drafts'
import { PublicationEffects } from '../../../src/features/versions/effects'
import { Publication } from '../../../src/features/versions/publication'
import { VersionStore } from '../../../src/features/versions/repository'
import { ServingAgents } from '../../../src/features/versions/serving'
import { notThere } from '../../../src/refusals'
import { type Env, gate, makeRuntime, openEnv, removeDir, WAIT_MS } from '../../actors/support'
import { until } from '../../support/until'

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)
const WS = 'ws_1'

let env: Env
let clock: ManualClock
let versions: VersionStore
let agent: AgentDoc
const agents = new Map<string, AgentDoc>()
const reader = {
  async get(workspaceId: string, id: string) {
    const doc = agents.get(id)
    if (!doc || doc.workspaceId !== workspaceId) throw notThere(`no agent ${id}`)
    return structuredClone(doc)
  },
}
const knowledge = { list: async () => ({ items: [{ id: 'doc_b' }, { id: 'doc_a' }], next: null }) }
const drafts = () => new DraftReader(reader, knowledge)
const restorer = async (_ws: string, id: string, fields: Partial<AgentDoc>, at: string) => {
  agents.set(id, { ...agents.get(id)!, ...fields, updatedAt: at })
}
const effects = () => new PublicationEffects(versions, drafts(), restorer)
const input = (pending: Partial<PendingCommand>): EffectInput => ({
  agentId: agent.id,
  workspaceId: WS,
  pending: {
    command: 'publish',
    commandId: 'c',
    from: 'draft',
    at: T0,
    by: 'key_1',
    versionId: 1,
    backupVersionId: null,
    toVersionId: null,
    restored: false,
    label: null,
    environment: null,
    changeSummary: null,
    ...pending,
  },
})

beforeEach(async () => {
  env = await openEnv()
  clock = new ManualClock(T0)
  versions = await VersionStore.open(env.store)
  agent = newAgentDoc(WS, 'Ava', 'local', new Date(T0).toISOString())
  agents.set(agent.id, agent)
})
afterEach(async () => {
  await env.close()
  removeDir(env.dir)
})

describe('effects', () => {
  test('a frozen version keeps its first capture when the effect runs again', async () => {
    const e = effects()
    await e.freezeVersion(input({ changeSummary: 'first' }))
    agents.set(agent.id, { ...agent, instructions: 'edited after the freeze' })
    await e.freezeVersion(input({ changeSummary: 'first' }))
    const v = await versions.get(WS, agent.id, 1)
    expect(v).toMatchObject({ number: 1, label: 'v1', kind: 'publish', environment: 'production', createdBy: 'key_1', changeSummary: 'first', isActive: false })
    expect(v!.snapshot.core.instructions).toBe(agent.instructions)
    expect(v!.snapshot.knowledge.documentIds).toEqual(['doc_a', 'doc_b'])
    expect(v!.createdAt).toBe(new Date(T0).toISOString())
  })

  test('going live converges on one active version, whatever an interrupted run left', async () => {
    const e = effects()
    for (const n of [1, 2, 3]) await e.freezeVersion(input({ versionId: n }))
    await versions.activate(agent.id, 1)
    await versions.activate(agent.id, 2)
    await e.goLive(input({ versionId: 3 }))
    await e.goLive(input({ versionId: 3 }))
    expect((await versions.list(agent.id)).map((v) => [v.number, v.isActive])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ])
    await e.stopServing(input({ command: 'unpublish' }))
    expect((await versions.list(agent.id)).some((v) => v.isActive)).toBe(false)
  })

  test('rollback steps: backup of the agent as it is, then the target restored onto it', async () => {
    const e = effects()
    await e.freezeVersion(input({ versionId: 1 }))
    agents.set(agent.id, { ...agent, greeting: 'changed', steps: [{ title: 'a', detail: 'b' }] })
    const rollback = input({ command: 'rollback', backupVersionId: 2, versionId: 3, toVersionId: 1 })
    await e.backupCurrent(rollback)
    await e.restoreVersion(rollback)
    await e.restoreVersion(rollback)
    expect((await versions.get(WS, agent.id, 2))!).toMatchObject({ kind: 'backup', environment: 'development', changeSummary: 'Backup before rollback to v1' })
    expect((await versions.get(WS, agent.id, 2))!.snapshot.core.greeting).toBe('changed')
    expect(agents.get(agent.id)).toMatchObject({ greeting: agent.greeting, steps: [] })
  })

  test('serving builds the agent from the live snapshot, and refuses when nothing is live', async () => {
    const serving = new ServingAgents(reader, versions)
    await expect(serving.servingAgent(WS, agent.id)).rejects.toMatchObject({ reason: 'conflict', details: { state: 'draft' } })
    const e = effects()
    await e.freezeVersion(input({ versionId: 1 }))
    await e.goLive(input({ versionId: 1 }))
    agents.set(agent.id, { ...agent, instructions: 'draft only' })
    const served = await serving.servingAgent(WS, agent.id)
    expect(served).toMatchObject({ id: agent.id, webKey: agent.webKey, instructions: agent.instructions })
    await expect(serving.servingAgent('ws_other', agent.id)).rejects.toMatchObject({ reason: 'not_found' })
  })
})

describe('on the actor runtime', () => {
  test('publish through the runtime: the version is written and served when the command answers', async () => {
    const runtime = makeRuntime(env, clock)
    const publication = new Publication(agentPublicationKind.register(runtime, effects()), clock, pino({ level: 'silent' }))
    await runtime.start()
    try {
      expect(await publication.command(agent, 'key_1', { type: 'agent.publish', changeSummary: null })).toEqual({ versionId: 1, backupVersionId: 0 })
      expect((await versions.live(WS, agent.id))?.number).toBe(1)
      await expect(publication.command(agent, 'key_1', { type: 'agent.unpublish' })).resolves.toEqual({ versionId: 0, backupVersionId: 0 })
      expect(await versions.live(WS, agent.id)).toBeNull()
      await expect(publication.command(agent, 'key_1', { type: 'agent.unpublish' })).rejects.toMatchObject({ reason: 'conflict', message: expect.stringContaining('draft') })
    } finally {
      await runtime.stop()
    }
  })

  test('an effect in flight when the process dies runs again at the next boot', async () => {
    const held = gate<void>()
    const first = effects()
    const slow = Object.assign(Object.create(first), {
      freezeVersion: async (i: EffectInput) => {
        await held.promise
        return first.freezeVersion(i)
      },
    }) as PublicationEffects
    const before = makeRuntime(env, clock, { instanceId: 'before' })
    const kind = agentPublicationKind.register(before, slow)
    await before.start()
    const event = { type: 'agent.publish' as const, at: T0, commandId: 'c1', by: 'key_1', versionId: 1, changeSummary: null }
    expect((await kind.send(agent.id, event, { input: { agentId: agent.id, workspaceId: WS } })).value).toBe('freezing')
    expect((await kind.read(agent.id))?.pendingWork).toBe(true)
    // The process dies with the effect in flight (its gate is never opened): nothing was written.
    await before.stop()
    expect(await versions.get(WS, agent.id, 1)).toBeNull()

    const after = makeRuntime(env, clock, { instanceId: 'after' })
    const again = agentPublicationKind.register(after, effects())
    expect((await after.start()).resumed).toBe(1)
    try {
      const done = await again.settle(agent.id)
      expect(done.state).toBe('published')
      await until('version 1 served', async () => (await versions.live(WS, agent.id))?.number === 1, WAIT_MS)
    } finally {
      await after.stop()
    }
  })
})
