/**
 * Calls whose placement or line was lost with a process: ended at boot (one instance) or when
 * another instance's sandbox switch stops (lost-switches.ts), so none stays ringing or connected
 * forever and none is dialled twice.
 */

import { ActorExistsError } from '../../../../actors/errors'
import { TRANSFER_STATES } from '../../../../machines/call'
import type { LostRecordings } from '../records/lost-recordings'
import type { CallTryDoc, CallTryRepo } from '../records/repository'
import type { CallActors } from './actor'

export interface LostCallsDeps {
  tries: CallTryRepo
  actors: CallActors
  /** Announces that a try's media stream is over (MediaEnds.ended): its analysis reads on. */
  mediaEnded: (tryId: string) => Promise<void>
  /** Finishes (or withdraws) the recording the dead process was writing. */
  recordings: LostRecordings
}

/**
 * The last instant a lost try is known to have been live: the media stream's last heartbeat
 * (`liveAt`, live/media.ts), else its answer (a line whose stream never started carried nothing we know
 * of). Never after `now`. The dropped call ends, and is billed, there, not when the restart noticed.
 */
export function lastKnownLive(row: CallTryDoc, now: number): number {
  const answered = row.answeredAt ? Date.parse(row.answeredAt) : now
  const beat = row.liveAt ? Date.parse(row.liveAt) : answered
  return Math.min(now, Math.max(answered, beat))
}

/**
 * The last instant a lost ringing try is known of: the network took it and it began to ring
 * (`startedAt`); nothing later is written while a line rings. Never after `now`. It ends there,
 * as a connected one ends at its heartbeat, not when the restart noticed.
 */
export function lastKnownRinging(row: CallTryDoc, now: number): number {
  return row.startedAt ? Math.min(now, Date.parse(row.startedAt)) : now
}

export class LostCalls {
  constructor(private readonly deps: LostCallsDeps) {}

  /**
   * After a restart on the sandbox network: tries that were ringing (placed) or connected lost
   * their line. Connected ones end `completed` with `hangup: failed`, ringing ones `failed`, the
   * reason in `error`, each at the last moment it was known; their transcripts so far stay. With several instances, `lost` picks the tries
   * of a switch that died (lost-switches.ts), and `streamDied` the media streams its instance
   * carried. Answers how many were ended, and whether some were left (an actor still leased to the
   * dead instance: it stops at the first, to try again later).
   */
  async dropLost(
    now: number,
    lost: (row: CallTryDoc) => boolean = () => true,
    reason = 'the call was dropped: the service restarted while it was in progress',
    streamDied: (row: CallTryDoc) => boolean = lost,
  ): Promise<{ dropped: number; left: 0 | 1 }> {
    // First, so a dropped call's analysis finds its stream done.
    await this.finishStreams(streamDied)
    let dropped = 0
    for (const status of ['connected', 'ringing'] as const) {
      for (const found of await this.deps.tries.find({ status })) {
        const row = found.callRef ? found : await this.placedByActor(found)
        if (!row) continue // placement in flight: it is re-run at boot
        if (!lost(row)) continue
        const event =
          row.status === 'connected'
            ? { type: 'call.ended' as const, at: lastKnownLive(row, now), hangup: 'failed' as const, error: reason }
            : { type: 'call.refused' as const, at: lastKnownRinging(row, now), error: reason }
        try {
          await this.deps.actors.send(row.callId, event)
          dropped++
        } catch {
          return { dropped, left: 1 }
        }
      }
    }
    return { dropped, left: 0 }
  }

  /**
   * A row with no callRef whose actor has one: the process stored the actor's placement (or more)
   * and died before projecting it onto the row. The row as the actor has it (its callRef, and
   * `connected` if it was answered), so the lost call is found and ended (an ended actor ignores
   * the event, and being resumed brings its row in step); null while the placement is in flight.
   */
  private async placedByActor(row: CallTryDoc): Promise<CallTryDoc | null> {
    const stored = await this.deps.actors.read(row.callId)
    const snapshot = stored?.snapshot as { value?: unknown; context?: { callRef?: string | null } } | undefined
    const callRef = snapshot?.context?.callRef ?? null
    const answered = snapshot?.value === 'connected' || (TRANSFER_STATES as readonly unknown[]).includes(snapshot?.value)
    return callRef ? { ...row, callRef, status: answered ? 'connected' : 'ringing' } : null
  }

  /**
   * Media streams that died with their process (`streamDied` picks them; at boot with one instance,
   * all), the call ended or not (a crash can come while its end is being written), on any network (a
   * carrier's call outlives the process; its stream does not): nothing more will be written to them,
   * and what each recorded is finished into its recording. Answers how many.
   */
  async finishStreams(streamDied: (row: CallTryDoc) => boolean = () => true): Promise<number> {
    let finished = 0
    for (const row of await this.deps.tries.find({ media: 'live' })) {
      if (!streamDied(row)) continue
      await this.deps.tries.update(row.id, { media: 'done', recording: await this.deps.recordings.finish(row) })
      await this.deps.mediaEnded(row.id)
      finished++
    }
    return finished
  }

  /**
   * Tries whose row was stored but whose actor never was (the process died between the two writes of
   * a placement, mid-campaign most likely): never dialled, and nothing would ever dial them. Each gets
   * its actor, born `failed` with `hangup: not_placed` (machines/call.ts `unplaced`), which brings
   * the row in step, frees its line and emits the last call.analysed. Rows stored after
   * `storedBefore` (service clock) are left: their placement may be in flight on a live instance.
   */
  async failUnplaced(storedBefore: number): Promise<number> {
    const { actors } = this.deps
    let failed = 0
    for (const row of await this.deps.tries.find({ status: { $in: ['ringing', 'scheduled'] }, callRef: null, attempt: 1 })) {
      if (Date.parse(row.createdAt) >= storedBefore || (await actors.read(row.callId))) continue
      const at = Date.parse(row.startedAt ?? row.createdAt)
      try {
        await actors.spawn(row.callId, { id: row.callId, at, unplaced: 'not placed: the service stopped before the call was dialled; it was not dialled later, so nobody is called twice' })
        failed++
      } catch (err) {
        if (!(err instanceof ActorExistsError)) throw err
      }
    }
    return failed
  }
}
