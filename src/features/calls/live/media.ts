/**
 * The calls feature's side of the media bridge (src/voice/bridge.ts MediaCalls): checks a media
 * socket's token and that its try is live, builds the call's voice pipeline (voice-pipeline.ts)
 * with its call record as the sink (call-record.ts), and ends both together.
 *
 * Works across instances: everything is read from the store, the actor is reached through the
 * runtime (which forwards to its owner), and a hang-up decided elsewhere (DELETE, the network)
 * reaches this socket on the coordination channel `media:{callId}`.
 */
import type { createActor } from 'xstate'
import { hostPaced, iso } from '../../../clock'
import type { Config } from '../../../config'
import type { Coordination } from '../../../coordination/port'
import { crashPoint } from '../../../crash-points'
import type { FileStorage } from '../../../files/port'
import type { Draining } from '../../../kernel/draining'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Attached, LiveSession, MediaCalls, OutboundFrame, PipelineState, Recorder, Refusal, StreamInfo } from '../../../voice/public'
import { CLOSE } from '../../../voice/public'
import { announceChannel } from '../control/transfers'
import { keepRecordingFiles } from '../records/recordings'
import type { CallTryDoc } from '../records/repository'
import { answeredByChannel, isAnsweredBy } from './answered-by'
import { CallRecord, type CallRecordDeps } from './call-record'
import { answerHandOffs } from './hand-off'
import type { CallFeed } from './live-feed'
import { type EndedBy, StreamEnd } from './stream-end'
import type { VoicePipeline } from './voice-pipeline'

/** Live pipelines in this process, by call id (admission counts them; the console's actor view reads their state). */
export type LiveStreams = Map<string, { state: PipelineState; why?: string; session: LiveSession }>

export interface CallMediaDeps {
  /** Builds each call's session from its record (voice-pipeline.ts). */
  pipeline: VoicePipeline
  /** What a call's record writes through (call-record.ts); its tries and tokens also check a stream. */
  record: CallRecordDeps
  /** Where this process's live streams are kept (shared with admission, built before the calls' media). */
  live: LiveStreams
  /** This instance (the runtime's id), written on the try as its stream's host. */
  host: string
  /** Where the finished recording is kept (records/recordings.ts). */
  files: FileStorage
  config: Pick<Config, 'telephonyProvider' | 'publicBaseUrl' | 'providers' | 'speech'>
  coordination: Coordination
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  /** Announces that a try's stream has written its last (MediaEnds.ended). */
  mediaEnded: (tryId: string) => Promise<void>
  /** Where the pipeline's state changes go for watchers (the console app); none in some tests. */
  feed?: CallFeed
  /** The XState inspector's observer (INSPECT=1). */
  inspect?: Parameters<typeof createActor>[1] extends infer O ? (O extends { inspect?: infer I } ? I : never) : never
}

export const mediaChannel = (callId: string) => `media:${callId}`

/**
 * How often a live stream writes its heartbeat (`liveAt`, the instant of its last frame): a call
 * dropped by a crash ends, and is billed, at most this much before its real last moment. Two
 * seconds is the order of the transcript's own writes (a second at a time while the agent speaks),
 * so the heartbeat at most doubles a live call's small write load.
 */
export const LIVE_BEAT_MS = 2_000

/** A goodbye ends its call within ~70 ms a character plus 3 s (session.ts endPolitely); then the end is written. */
const GOODBYE_WAIT_MS = 15_000

export class CallMedia implements MediaCalls {
  readonly live: LiveStreams

  /** The pipeline of a live call in this process, for the console's actor view: its state, and why it is there. */
  pipeline(callId: string): { state: PipelineState; why?: string } | null {
    const entry = this.live.get(callId)
    return entry ? { state: entry.state, ...(entry.why ? { why: entry.why } : {}) } : null
  }

  /** Calls writing their end (the try's end, the recording): a shutdown waits for them. */
  private readonly ending = new Set<Promise<void>>()

  constructor(private readonly deps: CallMediaDeps) {
    this.live = deps.live
  }

  /**
   * Shutdown: live calls go on until the drain's deadline; then the agent says `goodbye` on each
   * one left and hangs up (`hangup: answered`). Resolves once every call here has written its end.
   */
  async drain(draining: Draining, goodbye: string): Promise<void> {
    if (!(await draining.waitFor(() => this.live.size === 0))) this.deps.record.logger.info({ calls: this.live.size }, 'draining: the deadline has passed; live calls end with a goodbye')
    // Said again on each check: a stream that was attaching at the deadline hears it too (once).
    const ended = await draining.waitFor(() => {
      for (const { session } of this.live.values()) session.endWith(goodbye)
      return this.live.size === 0 && this.ending.size === 0
    }, Date.now() + GOODBYE_WAIT_MS)
    if (!ended) this.deps.record.logger.warn({ live: this.live.size, ending: this.ending.size }, 'draining: calls still open after their goodbye')
  }

  /** The network's proof that it opened the socket, as its telephony checks it (a Twilio signature). */
  checkUpgrade(request: Request): string | null {
    const u = new URL(request.url)
    // The sandbox callee and browsers do not come through the carrier: they carry the token in the path.
    if (/^\/media\/[^/]+\/[^/]+$/.test(u.pathname)) return null
    const url = `${this.deps.config.publicBaseUrl.replace(/^http/, 'ws').replace(/\/$/, '')}${u.pathname}${u.search}`
    return this.deps.record.telephony.mediaUpgradeRefusal(url, request.headers)
  }

  async refusal(callId: string, token: string | undefined): Promise<Refusal | null> {
    const checked = await this.check(callId, token)
    return 'refused' in checked ? checked : null
  }

  /** The call's live try for this token, or why a stream for it is refused (and the close code). */
  private async check(callId: string, token: string | undefined): Promise<{ row: CallTryDoc } | Refusal> {
    const [row] = await this.deps.record.tries.find({ callId }, { sort: [['attempt', -1]], limit: 1 })
    if (!row) return { refused: `no call ${callId}`, code: CLOSE.unknownCall }
    if (!this.deps.record.tokens.verify(callId, row.attempt, token)) return { refused: 'the media token does not verify', code: CLOSE.badToken }
    if (row.status !== 'connected') return { refused: `call ${callId} is ${row.status}, not connected`, code: CLOSE.notLive }
    if (this.live.has(callId)) return { refused: `call ${callId} already has a media stream`, code: CLOSE.notLive }
    return { row }
  }

  async attach(callId: string, token: string | undefined, stream: StreamInfo, io: { send: (f: OutboundFrame) => boolean; close: (code: number, reason: string) => void }): Promise<Attached> {
    const d = this.deps
    const checked = await this.check(callId, token)
    if ('refused' in checked) return checked
    const row = checked.row
    const workspace = await d.workspace(row.workspaceId)
    if (!workspace) return { refused: `call ${callId} has no workspace any more`, code: CLOSE.notLive }
    const record = new CallRecord(d.record, row, workspace)
    // Calls writing their end are tracked until written: a shutdown waits for them.
    const end = new StreamEnd((work) => {
      this.ending.add(work)
      const done = () => void this.ending.delete(work)
      work.then(done, done)
    })
    const built = await d.pipeline.build({
      row,
      workspace,
      record,
      send: io.send,
      chunkMs: d.config.speech.chunkMs,
      state: (state, why) => {
        const entry = this.live.get(callId)
        if (entry) Object.assign(entry, { state, why })
        d.feed?.publish({ kind: 'pipeline', callId, workspaceId: row.workspaceId, state, ...(why ? { why } : {}) })
      },
      hangUp: async ({ hangup, error }) => {
        io.close(CLOSE.ended, 'the call ended')
        await end.end(hangup, error)
      },
      actor: { systemId: `voice:${callId}`, inspect: d.inspect },
    })
    if (!built) return { refused: `call ${callId} has no agent or conversation any more`, code: CLOSE.notLive }
    if ('refused' in built) {
      await record.end('failed', built.refused)
      // The server cannot serve the stream (no speech engine, or the BYOK key failed).
      return { refused: built.refused, code: CLOSE.internal }
    }
    const { session, recorder } = built
    this.live.set(callId, { state: session.state, session })
    let unsubscribe: () => Promise<void> = async () => {}
    let lastFrameAt = d.record.clock.now()
    let beatAt = lastFrameAt
    await record.write({ media: 'live', mediaHost: d.host, liveAt: iso(beatAt), pipeline: built.pipeline, agentVersion: built.agentVersion })
    if (recorder) await record.recording(false)
    const stopBeat = hostPaced(d.record.clock).every(LIVE_BEAT_MS, () => {
      if (lastFrameAt <= beatAt) return
      beatAt = lastFrameAt
      void record.write({ liveAt: iso(beatAt) })
    })

    const wrapUp = async (hangup: EndedBy, error?: string) => {
      stopBeat()
      await session.close()
      this.live.delete(callId)
      await unsubscribe().catch(() => {})
      await record.end(hangup, error)
      crashPoint('call.media.ending')
      if (recorder) {
        await keepRecording(d.files, recorder, record.row).catch((err) => record.log.warn({ err }, 'could not write the recording'))
        await record.write({ recordingTimeline: recorder.timeline() })
        await record.recording(true)
      }
      await record.write({ media: 'done' })
      await record.settled()
      // The analysis waits for this (media-ends.ts), on whichever instance holds the call's actor.
      await d.mediaEnded(record.row.id).catch((err) => record.log.warn({ err }, 'could not announce the end of the media stream'))
    }
    const unhearEnd = await d.coordination.subscribe(mediaChannel(callId), () => void end.end('answered'))
    const unhearVerdict = built.leavesVoicemail ? await d.coordination.subscribe(answeredByChannel(callId), (by) => isAnsweredBy(by) && session.answeredBy(by)) : async () => {}
    // A warm transfer that did not connect: the agent tells the caller (control/effects.ts publishes it).
    const unhearNews = await d.coordination.subscribe(announceChannel(callId), (text) => typeof text === 'string' && session.announce(text))
    // A transfer about to take the line: the agent finishes its sentence first (hand-off.ts).
    const unhearHandOff = await answerHandOffs(d.coordination, callId, session)
    unsubscribe = async () => {
      await unhearEnd()
      await unhearVerdict()
      await unhearNews()
      await unhearHandOff()
    }
    // A hang-up that came while the stream was being set up (a DELETE on another instance) ends it now.
    await end.wrapUpWith(wrapUp)
    if (end.asked) return { refused: `call ${callId} ended while its stream was starting`, code: CLOSE.ended }
    session.start(stream.sampleRate)
    // A verdict that came before the stream did is on the row.
    if (built.leavesVoicemail) {
      const verdict = (await d.record.tries.get(row.id).catch(() => null))?.answeredBy
      if (isAnsweredBy(verdict)) session.answeredBy(verdict)
    }
    record.log.info({ ...built.pipeline, encoding: stream.encoding }, 'media stream started')
    return {
      call: {
        frame: (f) => {
          lastFrameAt = d.record.clock.now()
          session.frame(f)
        },
        drained: () => session.drained(),
        ended: (how, detail) => {
          if (how !== 'stop') record.log.warn({ how, detail, droppedFrames: session.dropped }, 'media stream ended abnormally')
          void end.end(how === 'stop' ? 'answered' : 'failed', how === 'stop' ? undefined : `media stream ${how === 'protocol' ? 'protocol error' : 'lost'}: ${detail ?? ''}`.trim())
        },
      },
    }
  }
}

/** The recorder mixes the WAV in DATA_DIR's scratch space; the file storage keeps it (and serves it, from any instance). */
async function keepRecording(files: FileStorage, recorder: Recorder, row: { callId: string; attempt: number }): Promise<void> {
  await keepRecordingFiles(files, await recorder.finish(), row)
}
