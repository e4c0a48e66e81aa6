/**
 * Admission (placing/admission.ts): whether this instance has room for one more call, read from the
 * live streams, the event loop's lag, the playout lead, the decoders' queue and resident memory;
 * with its counts on /metrics.
 */
import type { Kernel } from '../../../kernel/feature'
import type { SpeechProviders } from '../../../providers/speech'
import { playoutLead } from '../../../voice/public'
import type { LiveStreams } from '../live/media'
import { Admission, DEFAULT_LIMITS, MEMORY_SHARE, memoryBudget } from '../placing/admission'
import { LoopLag } from '../placing/loop-lag'

export interface Headroom {
  admission: Admission
  /** Started and stopped with the feature. */
  loopLag: LoopLag
}

export function buildHeadroom(kernel: Pick<Kernel, 'config' | 'metrics'>, live: LiveStreams, speech: SpeechProviders): Headroom {
  const { config, metrics } = kernel
  const loopLag = new LoopLag()
  const admission = new Admission(
    {
      ...DEFAULT_LIMITS,
      maxCalls: config.admission.maxCalls,
      maxLoopLagMs: config.admission.maxLoopLagMs,
      minPlayoutLeadMs: config.admission.minPlayoutLeadMs,
      maxRssBytes: config.admission.maxRssMb ? config.admission.maxRssMb * 1_048_576 : MEMORY_SHARE * memoryBudget(),
    },
    {
      media: () => live,
      loopLagMs: () => loopLag.ms,
      playoutLeadMs: () => playoutLead.lowest(),
      decoderWaitMs: () => speech.decoders?.oldestWaitMs ?? 0,
      rssBytes: () => process.memoryUsage.rss(),
    },
  )
  metrics.callsAdmitted.from(() => Object.entries(admission.admitted).map(([direction, value]) => ({ labels: { direction }, value })))
  metrics.callsRefused.from(() =>
    [...admission.refused].map(([key, value]) => {
      const [direction, reason] = key.split(':') as [string, string]
      return { labels: { direction, reason }, value }
    }),
  )
  return { admission, loopLag }
}
