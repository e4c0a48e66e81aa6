/**
 * A call's caller, as a replay plays it (docs/api/simulations.md "A scenario from a call"): the try
 * whose recording was kept, and the caller's side of that recording read from the workspace's own
 * file storage (never copied elsewhere). Whatever took the recording away — its retention ran out,
 * the customer's data was erased, the file was deleted — is said as the reason, so a replay never
 * plays audio that should be gone.
 */
import type { Clock } from '../../../clock'
import type { FileStorage } from '../../../files/port'
import { wavSamples } from '../../../voice/public'
import { callerRecordingKey } from './recordings'
import { type CallTryDoc, type CallTryRepo, newestTry, triesIn, tryId } from './repository'

export type CallerAudio = { pcm: Int16Array; rate: number } | { gone: string }

export class CallerRecordings {
  constructor(private readonly d: { files: FileStorage; tries: CallTryRepo; clock: Pick<Clock, 'now'> }) {}

  /** The call's newest try in the workspace (any call it holds, simulated ones too), or null. */
  async call(workspaceId: string, callId: string): Promise<CallTryDoc | null> {
    return newestTry(triesIn(this.d.tries, workspaceId), callId)
  }

  /** Why the try's caller cannot be replayed now, or null when it can. */
  why(row: CallTryDoc): string | null {
    const rec = row.recording
    if (!rec) return `call ${row.callId} was not recorded (its agent's voice.recordCalls was off), so there is no caller's audio to replay`
    if (!rec.ready) return `the recording of call ${row.callId} is not finished yet`
    if (Date.parse(rec.expiresAt) <= this.d.clock.now()) return `the recording of call ${row.callId} was deleted: its retention ended at ${rec.expiresAt}`
    if (!row.recordingTimeline) return `the recording of call ${row.callId} has no caller's turns to cut it at (it was finished after a restart)`
    return null
  }

  /** The caller's side of the try's recording (8 kHz mono), or why it is gone. */
  async audio(workspaceId: string, callId: string, attempt: number): Promise<CallerAudio> {
    const row = await this.d.tries.get(tryId(callId, attempt))
    if (!row || row.workspaceId !== workspaceId) return { gone: `call ${callId} is gone (the customer's data was erased)` }
    const why = this.why(row)
    if (why) return { gone: why }
    const bytes = await this.d.files.get(callerRecordingKey(callId, attempt))
    if (!bytes) return { gone: `the recording of call ${callId} was deleted (erased with the customer's data, or removed from storage)` }
    return { pcm: wavSamples(bytes), rate: 8_000 }
  }
}
