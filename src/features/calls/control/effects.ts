/**
 * The call chart's effects (actor.ts CallEffectPort): dial a try on the telephony port,
 * open the call's inbox conversation, hang up, analyse an answered try, project rows, publish the
 * call's events. Each is idempotent: a crash while one runs re-runs it at boot.
 */

import { CodedEffectFailure } from '../../../../actors/effects'
import type { CallEffectInput, EndLegInput, HangUpInput, JoinTransferInput, TransferCallInput } from '../../../../machines/call'
import { voiceTier } from '../../../catalog/voices'
import type { Clock } from '../../../clock'
import type { Coordination } from '../../../coordination/port'
import type { EventBus } from '../../../events/bus'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import type { PlaceRequest, Telephony } from '../../../providers/telephony/port'
import { isRefused } from '../../../refusals'
import type { AgentDoc, AgentService } from '../../agents/public'
import type { ContactService } from '../../contacts/public'
import type { ConversationFeature } from '../../conversations/public'
import type { PhoneNumberService } from '../../phone-numbers/public'
import type { Meter } from '../../usage/public'
import { analyseCall } from '../analysis/analysis'
import type { FieldSpec, FieldType } from '../analysis/field-values'
import { handOffCalledOff, sentenceHeard } from '../live/hand-off'
import { simulatedAgent } from '../live/simulated-agent'
import { type Admission, isRefusal, ROOM_WAIT_MS, waitForRoom } from '../placing/admission'
import { lineSets } from '../placing/lines'
import type { RefusalCounts } from '../placing/refusal-counts'
import { presentCall } from '../records/present'
import { CallProjection } from '../records/projection'
import { type CallTryDoc, type CallTryRepo, tryId } from '../records/repository'
import type { PublishedAgents } from '../service'
import type { CallEffectPort } from './actor'
import { writeBrief } from './brief-writer'
import { warmMissed } from './warm-brief'

export interface CallEffectDeps {
  tries: CallTryRepo
  telephony: Telephony
  /** Tells the call's media stream (on whichever instance holds it) that the call is over. */
  media: (callId: string) => Promise<void>
  agents: AgentService
  published: PublishedAgents
  numbers: PhoneNumberService
  contacts: ContactService
  conversations: ConversationFeature['conversations']
  models: ConversationFeature['models']
  meter: Meter
  bus: EventBus
  coordination: Coordination
  clock: Clock
  logger: Logger
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  /** Whether anyone reads the agent's call analyses: an enabled v1 webhook subscribed to call.analysed. */
  readsAnalysis: (workspaceId: string, agentId: string) => Promise<boolean>
  /** The try's row once its media stream has written its last, or at a deadline (live/media-ends.ts). */
  mediaSettled: (tryId: string) => Promise<CallTryDoc | null>
  /** Room on this instance for a call about to ring (placing/admission.ts); absent, always. */
  admission?: Admission
  /** Counts a waiting call that gave up for want of room, for its workspace (placing/refusal-counts.ts). */
  refusals?: Pick<RefusalCounts, 'refused'>
  /** Words for the caller from the agent, on the call's live voice session wherever it runs (a warm transfer that did not connect). */
  announce?: (callId: string, text: string) => Promise<void>
}

/** The caller's contact, made now; another path that made it at the same moment wins (a duplicate phone). */
async function knownCaller(contacts: ContactService, workspaceId: string, phone: string) {
  try {
    return await contacts.create(workspaceId, { phone })
  } catch (err) {
    const found = await contacts.findByPhone(workspaceId, phone)
    if (found) return found
    // A caller id that is no phone number (withheld, or a SIP name) leaves the call anonymous.
    if (isRefused(err, 'invalid')) return null
    throw err
  }
}

export function callEffects(deps: CallEffectDeps): CallEffectPort {
  // Minutes are priced by the voice that spoke: the published one's (the draft's for a line that only said it is not available).
  const spoken = { get: async (workspaceId: string, id: string) => (await deps.published.live(workspaceId, id)) ?? deps.agents.get(workspaceId, id) }
  const projection = new CallProjection({
    tries: deps.tries,
    coordination: deps.coordination,
    workspace: deps.workspace,
    agents: spoken,
    meter: deps.meter,
    callEnded: (conversationId) => deps.conversations.callEnded(conversationId),
  })
  const first = async (callId: string) => {
    const row = await deps.tries.get(tryId(callId, 1))
    if (!row) throw new Error(`call ${callId} has no row`)
    return row
  }
  /** The agent as it talked on `row`: the version that answered, or a simulation's draft or version; null when nobody talked. */
  const talkingAgent = async (row: CallTryDoc) => {
    if (row.simulation) return row.media ? ((await simulatedAgent(deps, row.workspaceId, row.agentId, row.simulation))?.agent ?? null) : null
    return row.agentVersion ? deps.published.version(row.workspaceId, row.agentId, row.agentVersion) : null
  }
  /** A warm transfer's brief, by the agent's model when it is a vendor's; any failure there falls back to the template (brief-writer.ts). */
  const brief = async (row: CallTryDoc, destination: string, signal?: AbortSignal) => {
    const contact = row.phone ? await deps.contacts.findByPhone(row.workspaceId, row.phone).catch(() => null) : null
    const [workspace, agent] = await Promise.all([deps.workspace(row.workspaceId), talkingAgent(row).catch(() => null)])
    const model = workspace && agent ? await deps.models.resolve(workspace, agent).catch(() => null) : null
    const fields = (agent?.collectFields ?? []).map((f) => ({ name: f.name, type: (f.type ?? 'text') as FieldType, description: f.description ?? null, choices: f.choices ?? null }))
    const input = { agentName: row.agentName, destination, caller: { name: contact?.name ?? null, phone: row.phone }, transcript: row.transcript, fields }
    const written = await writeBrief(model, input, { signal })
    if (written.fallback) deps.logger.warn({ call: row.id, reason: written.fallback }, "a warm transfer's brief is the template: the model's was not used")
    return written.text
  }
  /** The network takes the call's stream once the agent has finished the sentence the caller hears (live/hand-off.ts); a refusal lets the agent go on. */
  async function handOff(row: CallTryDoc, take: () => Promise<void>): Promise<void> {
    await sentenceHeard(deps.coordination, row)
    await take().catch(async (err) => {
      await handOffCalledOff(deps.coordination, row.callId)
      throw err
    })
  }
  return {
    async placeCall({ id, attempt }: CallEffectInput) {
      const row = await first(id)
      const draft = await deps.agents.get(row.workspaceId, row.agentId).catch(() => null)
      if (!draft) throw new CodedEffectFailure('not_placed', `agent ${row.agentName} (${row.agentId}) was deleted before the call rang`)
      // A simulated call talks as its draft or version, from no number of ours, and costs nothing.
      if (row.simulation) {
        const talking = await simulatedAgent(deps, row.workspaceId, row.agentId, row.simulation)
        if (!talking) throw new CodedEffectFailure('not_placed', `version ${row.simulation.target} of agent ${row.agentName} is gone`)
        // Its callee is a person: the network's detection says so at once, and the agent greets it (live/voice-pipeline.ts waits for a verdict).
        return deps.telephony.place({ callId: id, attempt, to: row.phone!, from: row.from!, ...machineDetection(talking.agent) })
      }
      // A booked call or a retry rings only while the agent is published (it was when the call was placed).
      const agent = await deps.published.live(row.workspaceId, row.agentId)
      if (!agent) throw new CodedEffectFailure('not_placed', `agent ${row.agentName} (${row.agentId}) was unpublished before the call rang; publish it and place the call again`)
      const held = row.from ? await deps.numbers.numberIn(row.workspaceId, row.from) : null
      if (!held || held.agentId !== row.agentId) {
        throw new CodedEffectFailure('not_placed', `${row.from} is no longer agent ${row.agentName}'s number`)
      }
      // A booked call or a retry is paid when it rings: one the account cannot pay a first minute
      // of then is not placed, the 402's words in its `error` (POST /calls checked the first try).
      if (row.scheduledFor !== null || attempt > 1) {
        const workspace = await deps.workspace(row.workspaceId)
        const refused = workspace
          ? await deps.meter.checkCall(workspace, voiceTier(agent.voice.voice)).then(
              () => null,
              (err: unknown) => refusal402(err),
            )
          : null
        if (refused) {
          deps.logger.warn({ call: id, attempt, workspace: row.workspaceId, reason: refused }, 'a waiting call was not placed: the account cannot pay for it')
          throw new CodedEffectFailure('not_placed', refused)
        }
      }
      // POST /calls admitted a call that rings now; a booked call or a retry waits here for room
      // instead of failing its callee (shown ringing meanwhile).
      const admission = row.scheduledFor !== null || attempt > 1 ? deps.admission : undefined
      if (admission) {
        const room = await waitForRoom(admission)
        if (isRefusal(room)) {
          deps.refusals?.refused(row.workspaceId, 'outbound', id)
          throw new CodedEffectFailure('not_placed', `the instance stayed at capacity for ${ROOM_WAIT_MS / 60_000} minutes: ${room.message}`)
        }
        const now = await deps.tries.get(tryId(id, attempt))
        if (now?.status === 'cancelled') {
          room.release()
          throw new CodedEffectFailure('not_placed', 'the call was cancelled while it waited for room')
        }
        room.bind(id)
      }
      return deps.telephony.place({
        callId: id,
        attempt,
        to: row.phone!,
        from: row.from!,
        ...machineDetection(agent),
      })
    },

    async openConversation({ id }: CallEffectInput) {
      const row = await first(id)
      if (row.conversationId) return
      // A caller we do not know becomes a contact, as on the chat app (docs/spec.md Contact: "created when a
      // person reaches out on any channel"). A browser visitor has no number and stays anonymous.
      let contact = row.phone ? await deps.contacts.findByPhone(row.workspaceId, row.phone) : null
      if (!contact && row.phone && row.direction === 'inbound') contact = await knownCaller(deps.contacts, row.workspaceId, row.phone)
      // A simulated call's conversation is a test one, as test chat's, flagged to stay out of analytics.
      const conversation = await deps.conversations.start({
        workspaceId: row.workspaceId,
        agentId: row.agentId,
        channel: 'voice',
        customer: { id: contact?.id ?? null, phone: row.phone },
        ...(row.simulation ? { test: true, simulated: true } : {}),
      })
      // Opened as the first try rings; a retry's row copies it from the first (records/projection.ts).
      await deps.tries.update(row.id, { conversationId: conversation.id })
    },

    async hangUp({ id, callRef, answered }: HangUpInput) {
      const row = await first(id)
      if (callRef) await deps.telephony.hangUp(callRef, answered, row.from)
      if (answered) await deps.media(id)
      const workspace = await deps.workspace(row.workspaceId)
      if (workspace) for (const { set } of lineSets(workspace)) await deps.coordination.releaseSlot(set, id)
    },

    async analyseCall({ id, attempt }: CallEffectInput) {
      const row = await deps.mediaSettled(tryId(id, attempt))
      const workspace = row ? await deps.workspace(row.workspaceId) : null
      // Analysed as the version that talked asks (its summaries and fields), even if the agent was
      // republished or unpublished since; a try nobody talked on (unanswered, or a line that only
      // said the agent is not available) has nothing to analyse and is charged nothing.
      const agent = row && workspace ? await talkingAgent(row) : null
      if (!row || !workspace || !agent) return { at: deps.clock.now() }
      // docs/spec.md Events rule 7: fields are extracted only when someone will read them — a call placed
      // through the API, or an agent with an endpoint subscribed to call.analysed.
      const read = row.direction === 'outbound' || (await deps.readsAnalysis(row.workspaceId, row.agentId))
      const fields: FieldSpec[] = !read
        ? []
        : (row.extract ?? agent.collectFields.map((f) => ({ name: f.name, type: (f.type ?? 'text') as FieldType, description: f.description ?? null, choices: f.choices ?? null })))
      const model = await deps.models.resolve(workspace, agent)
      const result = await analyseCall(model, {
        transcript: row.transcript,
        direction: row.direction,
        agentName: agent.name,
        purpose: row.purpose,
        summarise: agent.voice.summariseCalls,
        fields,
      })
      // Nobody spoke (most unanswered or at-once-hung-up tries): the row already says so.
      const unchanged = result.summary === row.summary && Object.keys(result.fields).length === 0 && Object.keys(row.fields ?? {}).length === 0
      if (!unchanged) await deps.tries.update(row.id, { summary: result.summary, fields: result.fields })
      // Each pass is billed to the developer (docs/spec.md rule 7); the id keeps a re-run effect from charging twice.
      // A simulated call is never billed.
      for (const pass of row.simulation ? [] : result.passes) {
        await deps.meter.charge({ id: `use_analysis_${row.id}_${pass.kind}`, workspaceId: row.workspaceId, act: { kind: 'analysis' }, refs: { callId: id, attempt, pass: pass.kind } })
      }
      return { at: deps.clock.now() }
    },

    async transferCall({ id, attempt, callRef, destination }: TransferCallInput, signal?: AbortSignal) {
      const row = await deps.tries.get(tryId(id, attempt))
      if (!row) throw new Error(`call ${id} has no row`)
      // A browser call has no phone line the network could put through.
      if (row.surface === 'web' || !callRef) throw new Error('this call has no phone line to transfer (a browser call cannot be put through to a phone)')
      if (destination.mode === 'warm') {
        const said = await brief(row, destination.name, signal)
        // The caller left while the brief was written: no person is called for nobody.
        if (signal?.aborted) throw new Error('the caller left before the person was called')
        const { legRef } = await deps.telephony.warmTransfer({ callId: id, attempt, callRef, to: destination.phoneNumber, from: row.from, brief: said })
        return { at: deps.clock.now(), legRef }
      }
      await handOff(row, () => deps.telephony.transfer({ callId: id, attempt, callRef, to: destination.phoneNumber, from: row.from }))
      return { at: deps.clock.now() }
    },

    async joinTransfer({ id, attempt, callRef, legRef, destination }: JoinTransferInput) {
      const row = await deps.tries.get(tryId(id, attempt))
      if (!row || !callRef || !legRef) throw new Error("the caller's or the person's line is unknown: they cannot be joined")
      await handOff(row, () => deps.telephony.joinTransfer({ callId: id, attempt, callRef, legRef, to: destination.phoneNumber, from: row.from }))
      return { at: deps.clock.now() }
    },

    async endLeg({ id, attempt, legRef, answered }: EndLegInput) {
      if (!legRef) return
      // The leg was placed from the call's number: its own carrier account (if it has one) ends it.
      const row = await deps.tries.get(tryId(id, attempt))
      await deps.telephony.hangUp(legRef, answered, row?.from)
    },

    project: (callId, snapshot) => projection.project(callId, snapshot),

    async publish(callId, event, eventId) {
      const attempt = typeof event.attempt === 'number' ? event.attempt : 1
      const row = await deps.tries.get(tryId(callId, attempt))
      if (!row) return
      if (row.simulation && !row.simulation.webhooks) return
      const call = presentCall(row)
      const base = { workspaceId: row.workspaceId, agentId: row.agentId }
      const { id, status, direction, phone, agent, reference, startedAt, answeredAt, endedAt, seconds, hangup } = call
      // The legacy surface's event for a try that ended (docs/spec.md: voice.call.ended): with
      // call.completed for an answered try, with the analysis for one nobody answered.
      const legacyEnded = () => deps.bus.publish({ ...base, type: 'voice.call.ended', data: { callId: id, status, hangup, seconds, phone, endedAt } }, { id: `${eventId}:legacy` })
      if (event.type === 'call.transfer_ended') {
        await deps.bus.publish({ ...base, type: 'call.transfer_ended', data: call }, { id: eventId })
        // A warm transfer that did not connect: the caller is still with the agent, who says so.
        const t = call.transfer
        if (t?.mode === 'warm' && t.outcome && t.outcome !== 'answered' && status === 'connected') await deps.announce?.(id, warmMissed(t.to, t.outcome))
        return
      }
      if (event.type === 'call.analysed') {
        await deps.bus.publish({ ...base, type: 'call.analysed', data: call }, { id: eventId })
        if (status !== 'completed') await legacyEnded()
        return
      }
      await deps.bus.publish({ ...base, type: 'call.completed', data: { id, attempt, status, direction, phone, agent, reference, startedAt, answeredAt, endedAt, seconds, hangup } }, { id: eventId })
      await legacyEnded()
    },
  }
}

/** A 402's words (the account cannot pay); anything else is thrown on. */
function refusal402(err: unknown): string {
  if (isRefused(err, 'not_covered')) return err.message
  throw err
}

/** What the network is asked to tell about who answered: a verdict is awaited only where a voicemail would be left (live/voice-pipeline.ts). */
function machineDetection(agent: AgentDoc): Pick<PlaceRequest, 'detectMachines' | 'leaveVoicemail'> {
  return { detectMachines: agent.voice.detectMachines, leaveVoicemail: agent.voice.detectMachines && !!agent.voice.voicemailMessage }
}
