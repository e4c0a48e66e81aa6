/**
 * The calls feature's side of the media bridge (src/media/bridge.ts MediaCalls): checks a media
 * socket's token and that its try is live, builds the call's voice pipeline (speech engines, VAD,
 * the agent through the conversation engine), and turns what the pipeline reports into the call
 * record: transcript lines as they are spoken, per-turn latency, the recording, and the end.
 *
 * Works across instances: everything is read from the store, the actor is reached through the
 * runtime (which forwards to its owner), and a hang-up decided elsewhere (DELETE, the network)
 * reaches this socket on the coordination channel `media:{callId}`.
 */
import { join } from 'node:path'
import { createActor, type Actor } from 'xstate'
import { voiceTurnMachine } from '../../../machines/voice-turn'
import type { CallActors } from '../../../actors/call'
import { iso, type Clock } from '../../clock'
import type { Config } from '../../config'
import type { Coordination } from '../../coordination/port'
import type { Logger } from '../../logger'
import type { Attached, MediaCalls, StreamInfo } from '../../media/bridge'
import { CLOSE } from '../../media/bridge'
import { stagesOf, type TurnStages } from '../../media/latency'
import { Recorder } from '../../media/recorder'
import { VoiceSession, type CallLine, type PipelineState } from '../../media/session'
import { voiceActivity } from '../../media/vad'
import type { MediaTokens } from '../../media/tokens'
import { DEFAULT_SILENCE_MS } from '../../media/turns'
import type { SpeechProviders } from '../../providers/speech'
import type { ByokRuntime } from '../byok'
import type { Telephony } from '../../providers/telephony/port'
import { verifyTwilioSignature } from '../../providers/telephony/twilio-signature'
import { languageCode, type AgentDoc, type AgentService } from '../agents'
import { DEFAULT_VOICE } from '../voices'
import { CALL_CEILINGS } from './ceilings'
import type { PublishedAgents } from './service'
import type { ConversationFeature } from '../conversations'
import type { WorkspaceDoc } from '../workspaces'
import type { TranscriptLine } from './analysis'
import { recordingLink } from './recordings'
import type { CallTryDoc, CallTryRepo } from './repository'

export interface CallMediaDeps {
  config: Pick<Config, 'telephonyProvider' | 'publicBaseUrl' | 'providers' | 'speech' | 'dataDir'>
  tries: CallTryRepo
  agents: AgentService
  published: Pick<PublishedAgents, 'served'>
  conversations: ConversationFeature['conversations']
  engine: ConversationFeature['engine']
  telephony: Telephony
  speech: SpeechProviders
  /** The workspace's own speech keys (BYOK), when the byok feature is built. */
  byok?: Pick<ByokRuntime, 'speech'>
  tokens: MediaTokens
  coordination: Coordination
  clock: Clock
  logger: Logger
  actors: () => CallActors
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  /** The XState inspector's observer (INSPECT=1). */
  inspect?: Parameters<typeof createActor>[1] extends infer O ? (O extends { inspect?: infer I } ? I : never) : never
}

export const mediaChannel = (callId: string) => `media:${callId}`

export class CallMedia implements MediaCalls {
  /** Live pipelines in this process, by call id (the console's actor view reads their state). */
  readonly live = new Map<string, { state: PipelineState; session: VoiceSession; turns: Actor<typeof voiceTurnMachine> }>()

  /** The pipeline of a live call in this process, for the console's actor view. */
  pipeline(callId: string): { state: PipelineState } | null {
    const entry = this.live.get(callId)
    return entry ? { state: entry.state } : null
  }

  constructor(private readonly deps: CallMediaDeps) {}

  checkUpgrade(request: Request): string | null {
    const { config } = this.deps
    if (config.telephonyProvider !== 'twilio') return null
    const u = new URL(request.url)
    const url = `${config.publicBaseUrl.replace(/^http/, 'ws').replace(/\/$/, '')}${u.pathname}${u.search}`
    // The sandbox callee and browsers do not come through Twilio: they carry the token in the path.
    if (/^\/media\/[^/]+\/[^/]+$/.test(u.pathname)) return null
    return verifyTwilioSignature(config.providers.twilioAuthToken!, url, {}, request.headers.get('x-twilio-signature')) ? null : 'X-Twilio-Signature does not verify'
  }

  async refusal(callId: string, token: string | undefined): Promise<string | null> {
    const checked = await this.check(callId, token)
    return 'refused' in checked ? checked.refused : null
  }

  /** The call's live try for this token, or why a stream for it is refused (and the close code). */
  private async check(callId: string, token: string | undefined): Promise<{ row: CallTryDoc } | { refused: string; code: number }> {
    const [row] = await this.deps.tries.find({ callId }, { sort: [['attempt', -1]], limit: 1 })
    if (!row) return { refused: `no call ${callId}`, code: CLOSE.unknownCall }
    if (!this.deps.tokens.verify(callId, row.attempt, token)) return { refused: 'the media token does not verify', code: CLOSE.badToken }
    if (row.status !== 'connected') return { refused: `call ${callId} is ${row.status}, not connected`, code: CLOSE.notLive }
    if (this.live.has(callId)) return { refused: `call ${callId} already has a media stream`, code: CLOSE.notLive }
    return { row }
  }

  async attach(callId: string, token: string | undefined, stream: StreamInfo, io: { send: (f: import('../../media/frames').OutboundFrame) => boolean; close: (code: number, reason: string) => void }): Promise<Attached> {
    const d = this.deps
    const checked = await this.check(callId, token)
    if ('refused' in checked) return checked
    const row = checked.row
    const workspace = await d.workspace(row.workspaceId)
    const draft = workspace ? await d.agents.get(row.workspaceId, row.agentId).catch(() => null) : null
    const conversation = row.conversationId ? await d.conversations.get(row.workspaceId, row.conversationId).catch(() => null) : null
    if (!workspace || !draft || !conversation) return { refused: `call ${callId} has no agent or conversation any more`, code: CLOSE.notLive }
    // The call talks as the published agent. With nothing published the line only says it is not
    // available and ends (SPEC.md Agent publication: a draft is not talked to), in the service's voice.
    const served = await d.published.served(row.workspaceId, row.agentId).catch((err: Error) => ({ unavailable: err.message }))
    const agent: AgentDoc = 'unavailable' in served ? { ...draft, voice: { ...draft.voice, voice: DEFAULT_VOICE, recordCalls: false } } : served.agent
    const unavailable = 'unavailable' in served ? served.unavailable : undefined
    if (unavailable) d.logger.info({ call: callId, agent: row.agentId }, `a call reached an agent with nothing published: ${unavailable}`)
    // A browser call is a real person whatever the network: the sandbox's scripted doubles never stand in.
    // BYOK first, with no fallback to the service's engines (SPEC.md BYOK).
    const own = d.byok ? await d.byok.speech(workspace, agent.id).catch((err: Error) => ({ failed: err.message })) : null
    if (own && 'failed' in own) {
      await this.end(row, 'failed', own.failed)
      return { refused: own.failed, code: 1011 }
    }
    const choice = own ? { stt: own.stt, tts: own.tts, missing: null } : d.speech.choose({ callId, sandbox: d.telephony.name === 'sandbox' && row.surface !== 'web' })
    if (!choice.stt || !choice.tts) {
      await this.end(row, 'failed', choice.missing!)
      return { refused: choice.missing!, code: 1011 }
    }
    const language = languageCode(agent.voice.language ?? agent.language)
    const stt = await choice.stt.open({ language })
    const vad = await voiceActivity(d.config.speech.vad)
    const recorder = agent.voice.recordCalls ? await Recorder.open(join(d.config.dataDir, 'recordings'), `${callId}-${row.attempt}`) : null
    let current = conversation
    const transcript: TranscriptLine[] = [...row.transcript]
    const turns: TurnStages[] = []
    let writes: Promise<unknown> = Promise.resolve()
    const write = (patch: Partial<CallTryDoc>) => (writes = writes.then(() => d.tries.update(row.id, patch)).catch((err) => d.logger.warn({ err, call: callId }, 'could not write the call record')))
    const say = (speaker: TranscriptLine['speaker'], text: string) => {
      transcript.push({ speaker, text, at: iso(d.clock.now()) })
      return write({ transcript: [...transcript] })
    }
    const log = d.logger.child({ call: callId, attempt: row.attempt })
    const line: CallLine = {
      callId,
      opening: row.direction === 'outbound' ? (row.purpose ?? agent.greeting) : agent.greeting,
      voice: row.voice ?? own?.voice ?? agent.voice.voice,
      language,
      silenceMs: agent.voice.endpointingMs ?? DEFAULT_SILENCE_MS,
      maxCallSeconds: agent.voice.maxCallSeconds ?? CALL_CEILINGS[workspace.plan].defaultCallSeconds,
      unavailable,
      respond: async (text, onText, signal) => {
        const result = await d.engine.respond({ workspace, agent, conversation: current, text, sideEffects: 'live', onText, signal })
        current = result.conversation
        return { reply: result.reply, endCall: result.endCall, messageId: result.replyMessage?.id ?? null }
      },
      agentSaid: async (text, messageId) => {
        if (messageId) await d.conversations.reviseMessage(messageId, text)
        else if (text) current = (await d.conversations.addMessage(current, { author: 'agent', parts: [{ type: 'text', text }] })).conversation
        if (text) await say('agent', text)
      },
      customerSaid: (text) => say('customer', text).then(() => {}),
      latency: (t) => {
        const stages = stagesOf(t)
        turns.push(stages)
        log.info({ turn: t.turn, ...stages }, 'voice turn latency')
        void write({ latencyTurns: [...turns] })
      },
      state: (state) => {
        const entry = this.live.get(callId)
        if (!entry) return
        entry.state = state
        entry.turns.send({ type: `to.${state}` })
      },
      // Replaced below, once the call's finish exists.
      hangUp: async () => {},
      log: (level, message, data) => log[level](data ?? {}, message),
    }
    const session = new VoiceSession({ line, vad, stt, tts: choice.tts, send: io.send, chunkMs: d.config.speech.chunkMs, record: recorder ?? undefined })
    const turnsActor = createActor(voiceTurnMachine, { systemId: `voice:${callId}`, ...(d.inspect ? { inspect: d.inspect } : {}) }).start()
    this.live.set(callId, { state: 'opening', session, turns: turnsActor })
    let unsubscribe: () => Promise<void> = async () => {}
    await write({ media: 'live', pipeline: { stt: choice.stt.name, tts: choice.tts.name, vad: vad.name, maxCallSeconds: line.maxCallSeconds }, agentVersion: 'unavailable' in served ? null : served.version.number })
    if (recorder) await write({ recording: recordingLink(d.config.publicBaseUrl, d.tokens, callId, row.attempt, workspace, d.clock.now(), false) })

    let over = false
    const finish = async (hangup: 'answered' | 'failed', error?: string) => {
      if (over) return
      over = true
      await session.close()
      turnsActor.stop()
      this.live.delete(callId)
      await unsubscribe().catch(() => {})
      await this.end(row, hangup, error)
      if (recorder) {
        await recorder.finish().catch((err) => log.warn({ err }, 'could not write the recording'))
        await write({ recording: recordingLink(d.config.publicBaseUrl, d.tokens, callId, row.attempt, workspace, d.clock.now(), true) })
      }
      await write({ media: 'done' })
      await writes
    }
    line.hangUp = async ({ hangup, error }) => {
      io.close(CLOSE.ended, 'the call ended')
      await finish(hangup, error)
    }
    unsubscribe = await d.coordination.subscribe(mediaChannel(callId), () => void line.hangUp({ hangup: 'answered' }))
    session.start(stream.sampleRate)
    log.info({ stt: choice.stt.name, tts: choice.tts.name, vad: vad.name, encoding: stream.encoding }, 'media stream started')
    return {
      call: {
        frame: (f) => session.frame(f),
        drained: () => session.drained(),
        ended: (how, detail) => {
          if (how !== 'stop') log.warn({ how, detail, droppedFrames: session.dropped }, 'media stream ended abnormally')
          void finish(how === 'stop' ? 'answered' : 'failed', how === 'stop' ? undefined : `media stream ${how === 'protocol' ? 'protocol error' : 'lost'}: ${detail ?? ''}`.trim())
        },
      },
    }
  }

  /** Ends the try (the actor ignores it if it ended already) and hangs up at the network. */
  private async end(row: CallTryDoc, hangup: 'answered' | 'failed', error?: string): Promise<void> {
    const d = this.deps
    try {
      await d.actors().send(row.callId, { type: 'call.ended', at: d.clock.now(), hangup, ...(error ? { error } : {}) })
      if (row.callRef) await d.telephony.hangUp(row.callRef, true)
    } catch (err) {
      d.logger.warn({ err, call: row.callId }, 'could not end the call after its media stream ended')
    }
  }
}

