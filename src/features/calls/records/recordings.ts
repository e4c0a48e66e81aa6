/**
 * Call recordings: the WAV the media pipeline mixed (DATA_DIR/recordings/<call>-<attempt>.wav) and
 * the caller's side alone beside it (`<call>-<attempt>.caller.wav`, what a replay plays),
 * served at `GET /recordings/{callId}/{attempt}/{token}.wav` to anyone holding the link (docs/spec.md
 * Recording rules), 404 while not ready or after retention. Retention by plan: 30 days on
 * pay-as-you-go (and Free and Pro, our choice), 75 on Scale (and Enterprise). A sweep deletes what
 * expired, once a day of the service clock (`RecordingSweeper`); erasing a customer deletes its
 * recordings.
 *
 * The files are kept behind the file-storage port (src/files): DATA_DIR/recordings on one machine,
 * GridFS with MONGODB_URL, so with several instances any one serves any recording.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Elysia, t } from 'elysia'
import { type Clock, iso } from '../../../clock'
import type { FileStorage } from '../../../files/port'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { Logger } from '../../../logger'
import type { MediaTokens } from '../../../voice/public'
import { callerWav } from '../../../voice/public'
import { type CallTryRepo, triesIn } from './repository'

const DAY_MS = 86_400_000
export const RETENTION_DAYS: Record<WorkspaceDoc['plan'], number> = { free: 30, payg: 30, pro: 30, scale: 75, enterprise: 75 }

const PREFIX = 'recordings/'
export const recordingKey = (callId: string, attempt: number) => `${PREFIX}${callId}-${attempt}.wav`
/** The caller's side alone, beside the mix, under the same retention and erasure (docs/api/calls.md "Recordings"). */
export const callerRecordingKey = (callId: string, attempt: number) => `${PREFIX}${callId}-${attempt}.caller.wav`
/** Where a call's recorder streams its raw sides while the call runs (DATA_DIR's scratch space). */
export const recordingScratch = (dataDir: string) => join(dataDir, 'tmp', 'recordings')

export function recordingLink(publicBaseUrl: string, tokens: MediaTokens, callId: string, attempt: number, workspace: WorkspaceDoc, now: number, ready: boolean) {
  const token = tokens.issue(`rec:${callId}`, attempt)
  return { url: `${publicBaseUrl.replace(/\/$/, '')}/recordings/${callId}/${attempt}/${token}.wav`, expiresAt: iso(now + RETENTION_DAYS[workspace.plan] * DAY_MS), ready }
}

export function recordingsRoute(deps: { files: FileStorage; tokens: MediaTokens; tries: CallTryRepo; now: () => number }) {
  return new Elysia().get(
    '/recordings/:callId/:attempt/:file',
    async ({ params, set }) => {
      const attempt = Number(params.attempt)
      const token = params.file.replace(/\.wav$/, '')
      const missing = () => {
        set.status = 404
        return { error: { code: 'not_found', message: 'no recording here (not ready yet, expired, or never made)' } }
      }
      if (!Number.isInteger(attempt) || !deps.tokens.verify(`rec:${params.callId}`, attempt, token)) return missing()
      const row = await deps.tries.get(`${params.callId}:${attempt}`)
      if (!row?.recording?.ready || Date.parse(row.recording.expiresAt) <= deps.now()) return missing()
      const file = await deps.files.stream(recordingKey(params.callId, attempt))
      if (!file) return missing()
      return new Response(file.body, { headers: { 'content-type': 'audio/wav', 'content-length': String(file.size) } })
    },
    { params: t.Object({ callId: t.String(), attempt: t.String(), file: t.String() }), detail: { hide: true } },
  )
}

/** The mix at `path` and the caller's side beside it (callerWav), kept by the file storage, then taken off the scratch space. */
export async function keepRecordingFiles(files: FileStorage, path: string, row: { callId: string; attempt: number }): Promise<void> {
  try {
    await files.put(recordingKey(row.callId, row.attempt), Bun.file(path))
    await files.put(callerRecordingKey(row.callId, row.attempt), Bun.file(callerWav(path)))
  } finally {
    await Promise.all([rm(path, { force: true }), rm(callerWav(path), { force: true })])
  }
}

/** Deletes recordings past their `expiresAt` (run at start and daily). */
export async function sweepRecordings(deps: { files: FileStorage; tries: CallTryRepo; now: () => number }): Promise<number> {
  let removed = 0
  for (const key of await deps.files.list(PREFIX)) {
    const m = /^recordings\/([^/]+)-(\d+)(?:\.caller)?\.wav$/.exec(key)
    if (!m) continue
    const row = await deps.tries.get(`${m[1]}:${m[2]}`)
    if (row?.recording && Date.parse(row.recording.expiresAt) > deps.now()) continue
    if (await deps.files.delete(key)) removed++
  }
  return removed
}

/**
 * Runs the sweep at start and then once a day of the service clock, on which `expiresAt` is
 * counted: a daily timer under the system clock; under the manual clock, each advance that
 * crosses a day since the last sweep (the calls feature passes the clock's advance hook here).
 */
export class RecordingSweeper {
  private last = Number.NEGATIVE_INFINITY
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(private readonly deps: { files: FileStorage; tries: CallTryRepo; clock: Clock; logger: Logger }) {}

  async start(): Promise<void> {
    await this.sweep()
    if (this.deps.clock.kind !== 'system') return
    this.timer = setInterval(() => void this.sweep(), DAY_MS)
    this.timer.unref?.()
  }

  /** The manual clock moved to `now`. */
  async clockMoved(now: number): Promise<void> {
    if (now - this.last >= DAY_MS) await this.sweep()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }

  private async sweep(): Promise<void> {
    const { clock, logger } = this.deps
    this.last = clock.now()
    await sweepRecordings({ ...this.deps, now: () => clock.now() }).catch((err) => logger.warn({ err }, 'recording sweep failed'))
  }
}

/** A customer erased: its calls' recordings go with it. */
export async function eraseRecordings(files: FileStorage, tries: CallTryRepo, workspaceId: string): Promise<void> {
  for (const row of await triesIn(tries, workspaceId).find()) {
    if (!row.recording) continue
    await files.delete(recordingKey(row.callId, row.attempt))
    await files.delete(callerRecordingKey(row.callId, row.attempt))
  }
}
