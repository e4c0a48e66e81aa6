/**
 * What a process picks up at boot from the one before it, and keeps tidy while it runs: calls whose
 * line or stream died with the last process (control/lost-calls.ts), another instance's sandbox switch that
 * went away (control/lost-switches.ts), and recordings past their retention (records/recordings.ts).
 */
import type { Kernel } from '../../../kernel/feature'
import type { WorkspaceDoc } from '../../../kernel/tenancy'
import type { SandboxScripts } from '../../../providers/stt/sandbox'
import type { CallActors } from '../control/actor'
import { LostCalls } from '../control/lost-calls'
import { LostSwitches } from '../control/lost-switches'
import { hearRelayedScripts } from '../live/sandbox-relay'
import { LostRecordings } from '../records/lost-recordings'
import { RecordingSweeper } from '../records/recordings'
import type { CallTryRepo } from '../records/repository'
import type { Lines } from './lines'

export interface Recovery {
  /** At boot: the calls the last process lost, the relayed scripts, the other switches. */
  start(): Promise<void>
  /** Retention is counted in days (30 / 75): swept now, then daily on the service clock. */
  sweep(): Promise<void>
  stop(): Promise<void>
}

export async function buildRecovery(
  kernel: Pick<Kernel, 'store' | 'files' | 'clock' | 'logger' | 'config' | 'coordination' | 'runtime' | 'clockHooks'>,
  d: {
    lines: Pick<Lines, 'sandbox' | 'telephony' | 'tokens' | 'several' | 'switchId'>
    tries: CallTryRepo
    actors: CallActors
    mediaEnded: (tryId: string) => Promise<void>
    workspace: (id: string) => Promise<WorkspaceDoc | null>
    /** Whether a call's stream is live in this process (a relayed script goes to it). */
    streaming: (callId: string) => boolean
    scripts: SandboxScripts
    /** When the feature's build began: placements stored before it died with the last process. */
    builtAt: number
  },
): Promise<Recovery> {
  const { files, clock, logger, config, coordination } = kernel
  const { lines, tries } = d
  const recordings = new LostRecordings({ files, tokens: lines.tokens, clock, logger, publicBaseUrl: config.publicBaseUrl, dataDir: config.dataDir, workspace: d.workspace })
  const lost = new LostCalls({ tries, actors: d.actors, mediaEnded: d.mediaEnded, recordings })
  const switches = lines.switchId ? await LostSwitches.open(kernel.store, { switchId: lines.switchId, owner: kernel.runtime.instanceId, coordination, calls: lost, clock, logger }) : null
  const sweeper = new RecordingSweeper({ files, tries, clock, logger })
  kernel.clockHooks.on('calls: lost streams', (now) => sweeper.clockMoved(now))
  let unhear: (() => Promise<void>) | null = null
  return {
    async start() {
      // The sandbox network's calls live in this process: after a restart, a call that was ringing
      // (placed) or connected has no line any more, as a carrier drops a line. With one instance
      // (no REDIS_URL) every such call was ours; with several, another instance may still hold it.
      if (lines.telephony === lines.sandbox && coordination.kind === 'local') await lost.dropLost(clock.now())
      // A carrier's call outlives the process, but its media stream died with it (one instance:
      // every stream was ours): what it recorded is finished. The carrier reports the call's end.
      else if (coordination.kind === 'local') await lost.finishStreams()
      // One instance: every placement stored before this process was built died with the last one
      // (a resumed campaign may be placing calls already).
      if (!lines.several) await lost.failUnplaced(d.builtAt)
      if (lines.several) unhear = await hearRelayedScripts(coordination, d.scripts, d.streaming)
      await switches?.start()
    },
    sweep: () => sweeper.start(),
    async stop() {
      sweeper.stop()
      await switches?.stop()
      await unhear?.()
    },
  }
}
