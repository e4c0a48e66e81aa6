/**
 * What a call's voice pipeline writes into its call record, in order, on one chain of writes: the
 * transcript as lines are heard, per-turn latency, the recording link, the media stream's state;
 * and the try's end, told to the call actor (which ignores it when the try ended already) and to
 * the phone network. Nothing here knows audio; the pipeline factory (voice-pipeline.ts) calls it.
 */

import { HANDED_OFF_STATES } from '../../../../machines/call'
import type { OverlapCounts } from '../../../../machines/voice-turn'
import { type Clock, iso } from '../../../clock'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import type { Telephony } from '../../../providers/telephony/port'
import type { MediaTokens } from '../../../voice/public'
import { stagesOf, type TurnLatency, type TurnStages } from '../../../voice/public'
import type { TranscriptLine } from '../analysis/analysis'
import type { CallActors } from '../control/actor'
import { recordingLink } from '../records/recordings'
import type { CallTryDoc, CallTryRepo } from '../records/repository'

export interface CallRecordDeps {
  tries: CallTryRepo
  actors: CallActors
  telephony: Telephony
  tokens: MediaTokens
  clock: Clock
  logger: Logger
  publicBaseUrl: string
}

export class CallRecord {
  private readonly transcript: TranscriptLine[]
  private readonly turns: TurnStages[] = []
  /** The transcript line of each agent turn still playing, by the session's turn id. */
  private readonly playing = new Map<number, TranscriptLine>()
  /** Agent turns whose final line is written: a late report of one changes nothing. */
  private readonly finished = new Set<number>()
  private writes: Promise<unknown> = Promise.resolve()
  readonly log: Logger

  constructor(
    private readonly d: CallRecordDeps,
    readonly row: CallTryDoc,
    private readonly workspace: WorkspaceDoc,
  ) {
    this.transcript = [...row.transcript]
    this.log = d.logger.child({ call: row.callId, attempt: row.attempt })
  }

  /** Writes in order; a failed write is logged, never thrown into the pipeline. */
  write(patch: Partial<CallTryDoc>): Promise<unknown> {
    this.writes = this.writes.then(() => this.d.tries.update(this.row.id, patch)).catch((err) => this.log.warn({ err }, 'could not write the call record'))
    return this.writes
  }

  /** A line heard whole; an agent turn's (`turn`) replaces what `hearing` wrote of it, or goes when nothing was heard. */
  said(speaker: TranscriptLine['speaker'], text: string, turn?: number): Promise<unknown> {
    const line = turn === undefined ? undefined : this.playing.get(turn)
    if (turn !== undefined) {
      this.playing.delete(turn)
      this.finished.add(turn)
    }
    if (line && text) line.text = text
    else if (line) this.transcript.splice(this.transcript.indexOf(line), 1)
    else if (text) this.transcript.push({ speaker, text, at: iso(this.d.clock.now()) })
    else return this.writes
    return this.write({ transcript: this.transcript.map((l) => ({ ...l })) })
  }

  /** What the caller has heard so far of the agent's turn `turn`, written as it plays. */
  hearing(text: string, turn: number): Promise<unknown> {
    if (this.finished.has(turn)) return this.writes
    const line = this.playing.get(turn)
    if (line) line.text = text
    else {
      const fresh: TranscriptLine = { speaker: 'agent', text, at: iso(this.d.clock.now()) }
      this.playing.set(turn, fresh)
      this.transcript.push(fresh)
    }
    return this.write({ transcript: this.transcript.map((l) => ({ ...l })) })
  }

  latency(t: TurnLatency): void {
    const stages = stagesOf(t)
    this.turns.push(stages)
    this.log.info({ turn: t.turn, ...stages }, 'voice turn latency')
    void this.write({ latencyTurns: [...this.turns] })
  }

  /** How the speech over the agent has ended so far: each decision is logged and the counts written. */
  overlaps(counts: OverlapCounts): void {
    this.log.info(counts, 'speech over the agent')
    void this.write({ overlaps: counts })
  }

  /** Pauses the agent talked into so far (media/talked-into.ts): each is logged and the count written. */
  talkedInto(count: number): void {
    this.log.info({ count }, 'the caller went on within a second of the answer')
    void this.write({ talkedInto: count })
  }

  recording(ready: boolean): Promise<unknown> {
    return this.write({ recording: recordingLink(this.d.publicBaseUrl, this.d.tokens, this.row.callId, this.row.attempt, this.workspace, this.d.clock.now(), ready) })
  }

  /** Every write so far has landed. */
  settled(): Promise<unknown> {
    return this.writes
  }

  /**
   * Ends the try (the actor ignores it if it ended already) and hangs up at the network; not while
   * the call is being handed off or was: the hand-off closed the stream, and the caller is still on
   * (while a warm transfer only calls the person, the stream is still the caller's: its end is the call's).
   */
  async end(hangup: 'answered' | 'failed' | 'voicemail', error?: string): Promise<void> {
    const d = this.d
    try {
      const after = await d.actors.send(this.row.callId, { type: 'call.ended', at: d.clock.now(), hangup, ...(error ? { error } : {}), source: 'media' })
      if ((HANDED_OFF_STATES as readonly string[]).includes(String(after.value))) return
      if (this.row.callRef) await d.telephony.hangUp(this.row.callRef, true, this.row.from)
    } catch (err) {
      this.log.warn({ err }, 'could not end the call after its media stream ended')
    }
  }
}
