/**
 * Simulations: scenarios (scripted callers and what their calls must show), suites of them on an
 * agent, and runs of a suite against the draft or a version — each run an actor
 * (machines/simulation-run.ts, actor.ts) whose `running` state plays the calls on
 * the sandbox network through the call actor, and the publish gate of a suite required to publish.
 */
import { iso } from '../../clock'
import { defineFeature, eraseCollections } from '../../kernel/feature'
import { agentsRef } from '../agents/public'
import { byokRef } from '../byok/public'
import { analyseCall, callsRef, type FieldType } from '../calls/public'
import { conversationsRef } from '../conversations/public'
import { messagingRef } from '../messaging/public'
import { versionsRef } from '../versions/public'
import { webRef } from '../web/public'
import { tenancyRef } from '../workspaces/public'
import { type SimulationRunActors, simulationRunKind } from './actor'
import { presentRunOutline } from './present'
import { simulationsRef } from './public'
import { CallReplays } from './replay'
import { openSimulationStore, type RunStatus, resultsSpec, runsSpec, scenariosSpec, simulationsIn, suitesSpec } from './repository'
import { SimulationRunner } from './runner'
import { SimulationService } from './service'
import { simulationsV1 } from './v1'

export const simulationsFeature = defineFeature(simulationsRef, {
  async build(kernel, use) {
    const { workspaceRepo } = use(tenancyRef)
    const { agents } = use(agentsRef)
    const { calls, callerRecordings } = use(callsRef)
    const { conversations, models } = use(conversationsRef)
    const { web } = use(webRef)
    const { byok } = use(byokRef)
    const { inbound } = use(messagingRef)
    const { versions, serving } = use(versionsRef)
    const { store: documents, clock, logger, bus } = kernel
    const store = await openSimulationStore(documents)
    const workspace = (id: string) => workspaceRepo.get(id)
    const replays = new CallReplays({
      recordings: callerRecordings,
      tools: async (conversationId) => (await conversations.history(conversationId, 500)).flatMap((m) => (m.tools ?? []).map((t) => t.name)),
    })
    const listening = () => kernel.listening.url !== null || kernel.config.sandboxMediaUrl !== undefined
    const runner = new SimulationRunner({
      store,
      replays,
      calls: () => calls,
      agents,
      conversations,
      workspace,
      clock,
      logger,
      listening,
      target: (workspaceId, agentId, target) => (target === 'draft' ? agents.get(workspaceId, agentId).catch(() => null) : serving.version(workspaceId, agentId, target)),
      callerModel: (ws, agent) => models.resolve(ws, agent),
      chat: (channel, ws, agent, customer, text) => (channel === 'web' ? web.simulated(ws, agent, customer.key, text) : inbound.simulated(ws, agent, customer, text)),
      // The same reading as a simulated call's analysis (calls/control/effects.ts): every field the agent collects, not billed.
      async fields(ws, agent, transcript) {
        if (agent.collectFields.length === 0) return {}
        const fields = agent.collectFields.map((f) => ({ name: f.name, type: (f.type ?? 'text') as FieldType, description: f.description ?? null, choices: f.choices ?? null }))
        const lines = transcript.map((l) => ({ speaker: l.speaker === 'agent' ? ('agent' as const) : ('customer' as const), text: l.text, at: iso(l.atMs) }))
        const read = await analyseCall(await models.resolve(ws, agent), { transcript: lines, direction: 'inbound', agentName: agent.name, purpose: null, summarise: false, fields })
        return read.fields
      },
    })
    let actors: SimulationRunActors | null = null
    const simulations = new SimulationService({
      store,
      agents,
      hasVersion: async (workspaceId, agentId, number) => (await serving.version(workspaceId, agentId, number)) !== null,
      draftFingerprint: (agent) => versions.draftFingerprint(agent),
      async vendorModels(ws) {
        const { openaiApiKey, anthropicApiKey } = kernel.config.providers
        return Boolean(openaiApiKey || anthropicApiKey) || (await byok.effective(ws)) !== null
      },
      async callerModel(ws, agentId, target) {
        const agent = target === 'draft' ? await agents.get(ws.id, agentId).catch(() => null) : await serving.version(ws.id, agentId, target)
        return agent ? models.resolve(ws, agent) : null
      },
      simulates: () => calls.simulates(),
      replays,
      clock,
      actors: () => actors!,
    })
    actors = simulationRunKind.register(kernel.runtime, {
      play: (id, progress) => runner.play(id, progress),
      async project(id, snapshot) {
        const c = snapshot.context
        const status = String(snapshot.value) as RunStatus
        const run = await store.runs.update(id, {
          status,
          finished: c.finished,
          passed: c.passed,
          failed: c.failed,
          startedAt: c.startedAt === null ? null : iso(c.startedAt),
          finishedAt: c.finishedAt === null ? null : iso(c.finishedAt),
        })
        if (run && status === 'cancelled') await runner.cancelled(run)
      },
      async publish(id, event, eventId) {
        const run = await store.runs.get(id)
        if (!run || event.type !== 'simulation.finished') return
        // The projection of the change that emitted it is stored before this runs (actors/persister.ts).
        await bus.publish({ type: 'simulation.finished', workspaceId: run.workspaceId, agentId: run.agentId, data: presentRunOutline(run) }, { id: eventId })
      },
    })
    versions.gatePublish((agent, draftHash) => simulations.gate(agent, draftHash))
    // A deleted agent's suites go (nothing could run them); its runs stay readable.
    agents.onDelete((agent) =>
      simulationsIn(store, agent.workspaceId)
        .suites.deleteMany({ agentId: agent.id })
        .then(() => {}),
    )
    kernel.customerHooks.onErased(eraseCollections(documents, [scenariosSpec, suitesSpec, runsSpec, resultsSpec]), 'simulations erased')
    return { services: { simulations }, v1: [simulationsV1({ context: kernel.http.v1, simulations })] }
  },
})
