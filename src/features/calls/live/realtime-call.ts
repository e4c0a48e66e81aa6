/**
 * A call whose agent runs on a speech-to-speech model (BYOK: the agent's model on the workspace's
 * OpenAI key is a Realtime model): the model replaces the speech engines and the language model
 * (src/voice/realtime-session.ts). It is told what the conversation engine tells a text model on a
 * call (the system prompt, the agent's tools as its functions) and writes what the cascaded
 * pipeline writes: both sides' lines in the transcript and the conversation, each agent turn with
 * its model and token usage. A connection the API refuses fails the call with its reason, and
 * the key's owner hears of it (byok/runtime.ts): there is no fallback to another engine.
 */
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import { RealtimeConnection } from '../../../providers/realtime/openai'
import type { OutboundFrame, PipelineState, RealtimeLine, Recorder, VoiceActivity } from '../../../voice/public'
import { LOCAL_WAITS, RealtimeSession, TRAILING_WAIT_MS } from '../../../voice/public'
import { type AgentDoc, languageCode } from '../../agents/public'
import type { ByokRealtime } from '../../byok/public'
import { buildSystemPrompt, type ConversationFeature, toolSpecs, toolsFor } from '../../conversations/public'
import type { CallTransfers } from '../control/transfers'
import type { CallTryDoc } from '../records/repository'
import type { CallRecord } from './call-record'

type Conversation = NonNullable<Awaited<ReturnType<ConversationFeature['conversations']['get']>>>

export interface RealtimeCallParts {
  row: CallTryDoc
  workspace: WorkspaceDoc
  agent: AgentDoc
  conversation: Conversation
  record: CallRecord
  recorder: Recorder | null
  engine: ByokRealtime
  conversations: ConversationFeature['conversations']
  tools: ConversationFeature['tools']
  transfers?: Pick<CallTransfers, 'byAgent'>
  opening: string
  maxCallSeconds: number
  send: (f: OutboundFrame) => boolean
  state: (state: PipelineState, why?: string) => void
  hangUp: RealtimeLine['hangUp']
  latency: RealtimeLine['latency']
  /** The service's VAD, for an agent whose turns it detects (`service_vad`). */
  vad: () => Promise<VoiceActivity>
}

/** Opens the model's session for the call; `{ refused }` with the API's reason when it cannot. */
export async function openRealtimeCall(p: RealtimeCallParts): Promise<{ session: RealtimeSession; pipeline: { stt: string; tts: string; vad: string } } | { refused: string }> {
  const { agent, row, record } = p
  let conversation = p.conversation
  const offered = toolsFor(agent, 'voice')
  let connection: RealtimeConnection
  try {
    connection = await RealtimeConnection.open({
      apiKey: p.engine.apiKey,
      baseUrl: p.engine.baseUrl,
      model: p.engine.model,
      voice: p.engine.voice,
      instructions: buildSystemPrompt(agent, { channel: 'voice', tools: offered }),
      tools: toolSpecs(offered, agent).map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      turnDetection: p.engine.turnDetection,
      language: languageCode(agent.voice.language ?? agent.language),
    })
  } catch (err) {
    const reason = (err as Error).message
    await p.engine.failed(reason).catch(() => {})
    return { refused: reason }
  }
  const sideEffects = row.simulation ? ('simulated' as const) : ('live' as const)
  const line: RealtimeLine = {
    callId: row.callId,
    opening: p.opening,
    maxCallSeconds: p.maxCallSeconds,
    customerSaid: async (text) => {
      p.recorder?.turnEnded()
      conversation = (await p.conversations.addMessage(conversation, { author: 'customer', parts: [{ type: 'text', text }] })).conversation
      await record.said('customer', text)
    },
    agentHearing: (text, turn) => void record.hearing(text, turn),
    agentSaid: async (text, usage, ran, turn) => {
      const tools = ran.map((r, i) => ({ id: `rt_${i}`, name: r.name, input: r.input as Record<string, unknown>, output: r.output }))
      const extra = { tools, model: p.engine.model, usage, ...(agent.servedVersion !== undefined ? { agentVersion: agent.servedVersion } : {}) }
      conversation = (await p.conversations.addMessage(conversation, { author: 'agent', parts: [{ type: 'text', text }], extra })).conversation
      await record.said('agent', text, turn)
    },
    runTool: async (name, input) => {
      const outcome = await p.tools.run(name, input, offered, { workspace: p.workspace, agent, conversation, sideEffects })
      if (outcome.conversation) conversation = outcome.conversation
      return outcome
    },
    transfer: async (name) => {
      if (!p.transfers || row.surface === 'web') return "I'm sorry, I can't put you through from here."
      const failed = await p.transfers.byAgent(row.callId, agent, name)
      if (!failed) return null
      record.log.warn({ destination: name, reason: failed }, 'the transfer the agent asked for was not made')
      return `I'm sorry, I couldn't put you through to ${name} just now.`
    },
    state: p.state,
    latency: p.latency,
    hangUp: async (reason) => {
      // A model failing mid-call is the key's failure too.
      if (reason.hangup === 'failed' && reason.error) await p.engine.failed(reason.error).catch(() => {})
      await p.hangUp(reason)
    },
    log: (level, message, data) => record.log[level](data ?? {}, message),
  }
  // With no words at a pause the wait is the rules' for an unread pause, capped by the agent's own.
  const turns = p.engine.turnDetection === 'service_vad' ? { vad: await p.vad(), waitMs: Math.min(LOCAL_WAITS.unknown, agent.voice.endpointingMs ?? TRAILING_WAIT_MS) } : undefined
  const session = new RealtimeSession({ line, connection, send: p.send, record: p.recorder ?? undefined, turns })
  const name = `openai-realtime:${p.engine.model}`
  return { session, pipeline: { stt: name, tts: name, vad: p.engine.turnDetection } }
}
