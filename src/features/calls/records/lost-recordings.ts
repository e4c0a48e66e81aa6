/**
 * The recording of a try whose process died mid-call. The recorder streams both sides to raw
 * files in DATA_DIR/tmp/recordings as the call runs, so what was said up to the crash is on disk:
 * it is mixed into the WAV and kept as a finished recording would be. Where no raw file is left to
 * finish (the instance that recorded it kept its DATA_DIR to itself), the link is withdrawn rather
 * than advertise a URL that would never play.
 */
import type { Clock } from '../../../clock'
import type { FileStorage } from '../../../files/port'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import type { MediaTokens } from '../../../voice/public'
import { finishLeftRecording } from '../../../voice/public'
import { keepRecordingFiles, recordingLink, recordingScratch } from './recordings'
import type { CallTryDoc } from './repository'

export interface LostRecordingsDeps {
  files: FileStorage
  tokens: MediaTokens
  clock: Clock
  logger: Logger
  publicBaseUrl: string
  dataDir: string
  workspace: (id: string) => Promise<WorkspaceDoc | null>
}

export class LostRecordings {
  constructor(private readonly d: LostRecordingsDeps) {}

  /** The try's recording once finished from what its dead process wrote: a ready link, or null. */
  async finish(row: CallTryDoc): Promise<CallTryDoc['recording']> {
    if (!row.recording || row.recording.ready) return row.recording
    const { files, tokens, clock, logger } = this.d
    const log = logger.child({ call: row.callId, attempt: row.attempt })
    try {
      const path = await finishLeftRecording(recordingScratch(this.d.dataDir), `${row.callId}-${row.attempt}`)
      const workspace = await this.d.workspace(row.workspaceId)
      if (!path || !workspace) {
        log.warn('the recording of a dropped call is not here to finish; its link is withdrawn')
        return null
      }
      await keepRecordingFiles(files, path, row)
      log.info('the recording of a dropped call was finished from what it had recorded')
      return recordingLink(this.d.publicBaseUrl, tokens, row.callId, row.attempt, workspace, clock.now(), true)
    } catch (err) {
      log.warn({ err }, 'could not finish the recording of a dropped call; its link is withdrawn')
      return null
    }
  }
}
