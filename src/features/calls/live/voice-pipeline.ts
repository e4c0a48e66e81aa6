/**
 * Builds one call's voice pipeline (src/voice/session.ts) from the call's record: the agent it
 * talks as (the published version; nothing published, or an answered inbound call the account
 * cannot pay a first minute of: the line only says it is not available, the reason in `error`),
 * the speech engines (the workspace's BYOK keys with no fallback, else ours), the VAD, the
 * recorder, and the CallLine through which the session reaches the conversation engine and the
 * call record (call-record.ts). The media socket side (media.ts) attaches it to a stream.
 */
import { CALL_CEILINGS } from '../../../catalog/limits'
import { DEFAULT_VOICE, voiceTier } from '../../../catalog/voices'
import type { Clock } from '../../../clock'
import type { Config } from '../../../config'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import { REALTIME_VOICES } from '../../../providers/realtime/openai'
import type { SpeechProviders } from '../../../providers/speech'
import type { Telephony } from '../../../providers/telephony/port'
import { isRefused } from '../../../refusals'
import type { OutboundFrame, PhraseCache } from '../../../voice/public'
import {
  type CallLine,
  DEFAULT_DIALS,
  type LiveSession,
  type PipelineState,
  Recorder,
  type SessionParts,
  StreamClock,
  stagesOf,
  TRAILING_WAIT_MS,
  type TurnStages,
  VoiceSession,
  voiceActivity,
} from '../../../voice/public'
import { type AgentDoc, type AgentService, dialsOf, languageCode, voicemailFor } from '../../agents/public'
import type { ByokRuntime } from '../../byok/public'
import type { ContactService } from '../../contacts/public'
import type { ConversationFeature } from '../../conversations/public'
import type { Meter } from '../../usage/public'
import type { CallTransfers } from '../control/transfers'
import { recordingScratch } from '../records/recordings'
import type { CallTryDoc } from '../records/repository'
import type { PublishedAgents } from '../service'
import type { CallRecord } from './call-record'
import { openRealtimeCall } from './realtime-call'
import { simulatedAgent } from './simulated-agent'

export interface VoicePipelineDeps {
  config: Pick<Config, 'speech' | 'dataDir'>
  agents: AgentService
  published: Pick<PublishedAgents, 'served' | 'version'>
  conversations: ConversationFeature['conversations']
  engine: ConversationFeature['engine']
  telephony: Pick<Telephony, 'name'>
  speech: SpeechProviders
  byok?: Pick<ByokRuntime, 'speech'> & Partial<Pick<ByokRuntime, 'realtime'>>
  /** The agent's tools, run for a speech-to-speech model's function calls (realtime-call.ts). */
  tools?: ConversationFeature['tools']
  phrases: PhraseCache
  /** The service clock: on the manual one a simulated call runs on its caller's audio (StreamClock). */
  clock?: Pick<Clock, 'kind'>
  /** Whom an outbound call reaches: its voicemail message names them. */
  contacts?: Pick<ContactService, 'findByPhone'>
  /** An inbound call (phone or browser) is answered before it can be refused: the line then says it is not available. */
  meter?: Pick<Meter, 'checkCall'>
  logger: Logger
  /** Puts a live call through to one of the agent's transfers (its transfer_call tool). */
  transfers?: Pick<CallTransfers, 'byAgent'>
  /** Hears each voice turn's stages as the call record stores them (the turn latency on /metrics). */
  turnObserved?: (stages: TurnStages) => void
}

export type Built =
  | {
      session: LiveSession
      recorder: Recorder | null
      pipeline: NonNullable<CallTryDoc['pipeline']>
      /** The version the call talks as; null when nothing is published. */
      agentVersion: number | null
      /** The session waits to be told who answered (voicemail drop): `VoiceSession.answeredBy`. */
      leavesVoicemail: boolean
    }
  | { refused: string }

/** One call the pipeline is built for: its record, and where its audio, state and hang-up go. */
export interface PipelineCall {
  row: CallTryDoc
  workspace: WorkspaceDoc
  record: CallRecord
  send: (f: OutboundFrame) => boolean
  chunkMs: number
  state: (state: PipelineState, why?: string) => void
  hangUp: CallLine['hangUp']
  actor?: SessionParts['actor']
}

/**
 * The calls feature's voice pipeline as one value: the media socket side (media.ts) asks it for a
 * call's session and needs none of the agents, engines and conversations it is built from.
 */
export interface VoicePipeline {
  /** The call's session; null when its agent or conversation is gone. */
  build(call: PipelineCall): Promise<Built | null>
}

export const voicePipeline = (d: VoicePipelineDeps): VoicePipeline => ({ build: (call) => buildVoicePipeline(d, call) })

async function buildVoicePipeline(d: VoicePipelineDeps, c: PipelineCall): Promise<Built | null> {
  const { row, workspace, record } = c
  const draft = await d.agents.get(row.workspaceId, row.agentId).catch(() => null)
  let conversation = row.conversationId ? await d.conversations.get(row.workspaceId, row.conversationId).catch(() => null) : null
  if (!draft || !conversation) return null
  // The call talks as the published agent. With nothing published the line only says it is not
  // available and ends (docs/spec.md Agent publication: a draft is not talked to), in the service's voice.
  // A simulated call talks as the draft or the version its run names (simulated-agent.ts).
  const served = row.simulation ? await simulatedServed(d, row) : await d.published.served(row.workspaceId, row.agentId).catch((err: Error) => ({ unavailable: err.message }))
  let unavailable = 'unavailable' in served ? served.unavailable : undefined
  if (unavailable) record.log.info({ agent: row.agentId }, `a call reached an agent with nothing published: ${unavailable}`)
  // An outbound call was refused (402) before it rang; one coming in is refused here, honestly.
  if (!unavailable && row.direction === 'inbound') {
    const unpaid = await unpaidCall(d, workspace, (served as { agent: AgentDoc }).agent)
    if (unpaid) {
      unavailable = unpaid
      record.log.warn({ agent: row.agentId, workspace: workspace.id, reason: unpaid }, 'an incoming call was not taken: the account cannot pay for it')
    }
  }
  const agent: AgentDoc = unavailable ? { ...draft, voice: { ...draft.voice, voice: DEFAULT_VOICE, recordCalls: false } } : (served as { agent: AgentDoc }).agent
  // An agent whose model is a speech-to-speech one talks through it, in place of the speech engines and the language model.
  const realtime = !unavailable && d.byok?.realtime && d.tools ? await d.byok.realtime(workspace, agent.id).catch((err: Error) => ({ refused: err.message })) : null
  if (realtime && 'refused' in realtime) return realtime
  if (realtime) {
    const recorder = agent.voice.recordCalls ? await Recorder.open(recordingScratch(d.config.dataDir), `${row.callId}-${row.attempt}`) : null
    const opened = await openRealtimeCall({
      ...{ row, workspace, agent, conversation, record, recorder, conversations: d.conversations, tools: d.tools!, transfers: d.transfers },
      // A call's `overrides.voice` among the model's voices speaks in it; another voice is not one the model has.
      engine: row.voice && (REALTIME_VOICES as readonly string[]).includes(row.voice) ? { ...realtime, voice: row.voice } : realtime,
      opening: row.direction === 'outbound' ? (row.purpose ?? agent.greeting) : agent.greeting,
      maxCallSeconds: agent.voice.maxCallSeconds ?? CALL_CEILINGS[workspace.plan].defaultCallSeconds,
      ...{ send: c.send, state: c.state, hangUp: c.hangUp, vad: () => voiceActivity(d.config.speech.vad) },
      latency: (t) => {
        record.latency(t)
        d.turnObserved?.(stagesOf(t))
      },
    })
    if ('refused' in opened) return opened
    const pipeline = { ...opened.pipeline, maxCallSeconds: agent.voice.maxCallSeconds ?? CALL_CEILINGS[workspace.plan].defaultCallSeconds, dials: DEFAULT_DIALS }
    return { session: opened.session, recorder, pipeline, agentVersion: 'version' in served && served.version ? served.version.number : null, leavesVoicemail: false }
  }
  // BYOK first, with no fallback to the service's engines (docs/spec.md BYOK). A browser call is a real
  // person whatever the network: the sandbox's scripted doubles never stand in.
  const own = d.byok ? await d.byok.speech(workspace, agent.id).catch((err: Error) => ({ failed: err.message })) : null
  if (own && 'failed' in own) return { refused: own.failed }
  const choice = own ? { stt: own.stt, tts: own.tts, missing: null } : d.speech.choose({ callId: row.callId, sandbox: d.telephony.name === 'sandbox' && row.surface !== 'web' })
  if (!choice.stt || !choice.tts) return { refused: choice.missing! }
  const language = languageCode(agent.voice.language ?? agent.language)
  const stt = await choice.stt.open({ language, assemblyai: agent.voice.assemblyai ?? null, flux: agent.voice.flux ?? null })
  const vad = await voiceActivity(d.config.speech.vad)
  // Voicemail drop: an outbound phone call whose agent detects machines and has a message to leave (the network was asked to report who answered).
  const message = !unavailable && row.direction === 'outbound' && row.surface !== 'web' && agent.voice.detectMachines ? agent.voice.voicemailMessage : null
  const contact = message && row.phone ? await d.contacts?.findByPhone(row.workspaceId, row.phone).catch(() => null) : null
  const voicemail = message ? voicemailFor(message, contact ?? null, row.phone ?? '') : undefined
  const recorder = agent.voice.recordCalls ? await Recorder.open(recordingScratch(d.config.dataDir), `${row.callId}-${row.attempt}`) : null
  const line: CallLine = {
    callId: row.callId,
    opening: row.direction === 'outbound' ? (row.purpose ?? agent.greeting) : agent.greeting,
    voice: row.voice ?? own?.voice ?? agent.voice.voice,
    language,
    endpointingMaxMs: agent.voice.endpointingMs ?? TRAILING_WAIT_MS,
    // The version's own dials; a line no agent serves says its one line as the service would.
    dials: unavailable ? DEFAULT_DIALS : dialsOf(agent.voice),
    maxCallSeconds: agent.voice.maxCallSeconds ?? CALL_CEILINGS[workspace.plan].defaultCallSeconds,
    unavailable,
    // The sandbox's callee presses keys as tones in its audio; Twilio sends them as `dtmf` messages.
    hearsKeypadTones: d.telephony.name === 'sandbox' && row.surface !== 'web',
    voicemail,
    respond: async (text, onText, signal, release, stepped) => {
      const result = await d.engine.respond({
        workspace,
        agent,
        conversation: conversation!,
        text,
        sideEffects: row.simulation ? 'simulated' : 'live',
        onText,
        signal,
        holdWrites: release,
        firstStepDone: stepped,
      })
      conversation = result.conversation
      return { reply: result.reply, endCall: result.endCall, transfer: result.transfer ?? null, digits: result.digits ?? null, messageId: result.replyMessage?.id ?? null }
    },
    transfer: async (name) => {
      // A browser call has no phone line to hand over; the tool is offered on every voice call.
      if (!d.transfers || row.surface === 'web') return "I'm sorry, I can't put you through from here."
      const failed = await d.transfers.byAgent(row.callId, agent, name)
      if (!failed) return null
      record.log.warn({ destination: name, reason: failed }, 'the transfer the agent asked for was not made')
      return `I'm sorry, I couldn't put you through to ${name} just now.`
    },
    agentSaid: async (text, messageId, _opening, turn) => {
      if (messageId) await d.conversations.reviseMessage(messageId, text)
      else if (text) conversation = (await d.conversations.addMessage(conversation!, { author: 'agent', parts: [{ type: 'text', text }] })).conversation
      await record.said('agent', text, turn)
    },
    agentHearing: (text, turn) => void record.hearing(text, turn),
    customerSaid: (text) => {
      recorder?.turnEnded()
      return record.said('customer', text).then(() => {})
    },
    latency: (t) => {
      record.latency(t)
      d.turnObserved?.(stagesOf(t))
    },
    overlaps: (counts) => record.overlaps(counts),
    talkedInto: (count) => record.talkedInto(count),
    state: (state, why) => c.state(state, why),
    hangUp: c.hangUp,
    log: (level, message, data) => record.log[level](data ?? {}, message),
  }
  // A simulated call on the manual clock runs on its caller's audio, not the host's timers: the
  // same script gives the same turns however busy the host is (docs/api/simulations.md).
  const stream = row.simulation && d.clock?.kind === 'manual' ? new StreamClock() : undefined
  const session = new VoiceSession({ line, vad, stt, tts: choice.tts, send: c.send, chunkMs: c.chunkMs, record: recorder ?? undefined, phrases: d.phrases, actor: c.actor, stream })
  const pipeline = { stt: choice.stt.name, tts: choice.tts.name, vad: vad.name, maxCallSeconds: line.maxCallSeconds, dials: line.dials }
  return { session, recorder, pipeline, agentVersion: 'version' in served && served.version ? served.version.number : null, leavesVoicemail: !!voicemail }
}

/** What a simulated call talks as, in the shape `served` answers (no version: the draft). */
async function simulatedServed(d: VoicePipelineDeps, row: CallTryDoc): Promise<{ agent: AgentDoc; version: { number: number } | null } | { unavailable: string }> {
  const talking = await simulatedAgent(d, row.workspaceId, row.agentId, row.simulation!)
  if (!talking) return { unavailable: `the simulated call's agent version ${row.simulation!.target} is gone` }
  return { agent: talking.agent, version: talking.version === null ? null : { number: talking.version } }
}

/** The 402's words when the account cannot pay a first minute of the agent's voice; null when it can. */
async function unpaidCall(d: VoicePipelineDeps, workspace: WorkspaceDoc, agent: AgentDoc): Promise<string | null> {
  try {
    await d.meter?.checkCall(workspace, voiceTier(agent.voice.voice))
    return null
  } catch (err) {
    if (isRefused(err, 'not_covered')) return err.message
    throw err
  }
}
