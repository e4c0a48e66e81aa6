/**
 * The service's Prometheus metrics (GET /metrics, docs/production.md "Metrics"): one registry per
 * service instance, so two instances in one process (tests) never mix their counts, plus the
 * process's own metrics (CPU, memory, event-loop lag, GC: prom-client's defaults) once per process.
 *
 * Named metrics only: the kernel and features record into them (counters, histograms) or provide
 * what a gauge reads when scraped (`from`); none of them sees the registry.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Logger } from '../logger'
import type { TurnStages } from '../voice/public'

const PREFIX = 'agent_platform_'

// Seconds. A voice turn's stages run from tens of ms (endpointing, STT final) to seconds (a slow
// model's first token); bench:turns' targets (p50 600 ms, p95 800 ms) fall between buckets.
const TURN_BUCKETS = [0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2, 3, 5, 10]
// A SQLite batch commit is ~0.1–1 ms (an fsync only at checkpoints); a MongoDB write a few ms.
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/** TurnStages' keys as `stage` labels. */
const STAGE_LABELS: Record<keyof TurnStages, string> = {
  endpointingMs: 'endpointing',
  sttMs: 'stt',
  sttQueueMs: 'stt_queue',
  llmFirstTokenMs: 'llm_first_token',
  ttsFirstByteMs: 'tts_first_byte',
  toFirstAudioMs: 'to_first_audio',
  toFirstHeardMs: 'to_first_heard',
}

type Labels<L extends string> = Partial<Record<L, string>>
export type Sample<L extends string> = { labels: Labels<L>; value: number }
type Source<L extends string> = () => number | Sample<L>[] | Promise<number | Sample<L>[]>

/**
 * A gauge or counter whose value is read when scraped, from sources provided later (the runtime's
 * counts, a feature's live sessions); several sources add up. A source that fails is logged and
 * left out of that scrape, so one slow store read does not cost the whole scrape.
 */
export class Sampled<L extends string = never> {
  private readonly sources: Source<L>[] = []

  constructor(registry: Registry, logger: Logger, type: 'gauge' | 'counter', name: string, help: string, labelNames: readonly L[] = []) {
    const sources = this.sources
    const config = {
      name,
      help,
      labelNames: labelNames as L[],
      registers: [registry],
      async collect(this: Gauge<L> | Counter<L>) {
        this.reset()
        for (const source of sources) {
          try {
            const read = await source()
            for (const { labels, value } of typeof read === 'number' ? [{ labels: {}, value: read }] : read) this.inc(labels as Partial<Record<L, string>>, value)
          } catch (err) {
            logger.warn({ err, metric: name }, 'a metric could not be read')
          }
        }
      },
    }
    if (type === 'gauge') new Gauge<L>(config)
    else new Counter<L>(config)
  }

  from(source: Source<L>): void {
    this.sources.push(source)
  }
}

let processRegistry: Registry | null = null

/** CPU, memory, handles, GC and event-loop lag (`nodejs_eventloop_lag_*`): of the process, so made once. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export class Metrics {
  readonly registry = new Registry()
  readonly contentType = this.registry.contentType

  // Calls and their media.
  readonly callsLive: Sampled<'state'>
  readonly mediaSessions: Sampled
  readonly callsPlaced: Counter<'direction'>
  readonly callsEnded: Counter<'status' | 'hangup'>
  readonly turnLatency: Histogram<'stage'>
  readonly sttDecoders: Sampled<'state'>
  readonly callsAdmitted: Sampled<'direction'>
  readonly callsRefused: Sampled<'direction' | 'reason'>
  readonly sttUtterancesRefused: Sampled
  readonly ttsSynthesizers: Sampled<'state'>
  // Webhooks.
  readonly webhookDeliveries: Counter<'surface' | 'result'>
  // The kernel.
  readonly actorsLive: Sampled<'kind'>
  readonly actorsPassivated: Sampled<'kind'>
  readonly timersDue: Sampled
  readonly timersPending: Sampled
  readonly storeCommit: Histogram<'store'>

  constructor(logger: Logger) {
    const registers = [this.registry]
    const sampled = <L extends string = never>(type: 'gauge' | 'counter', name: string, help: string, labelNames: readonly L[] = []) =>
      new Sampled<L>(this.registry, logger, type, `${PREFIX}${name}`, help, labelNames)
    this.callsLive = sampled('gauge', 'calls_live', 'Calls ringing or connected, from the store: the same on every instance', ['state'])
    this.mediaSessions = sampled('gauge', 'media_sessions', "Media streams (a call's audio) open on this instance")
    this.callsPlaced = new Counter({
      name: `${PREFIX}calls_placed_total`,
      help: 'Call tries that started: rang out (outbound, retries included) or were answered (inbound, web)',
      labelNames: ['direction'],
      registers,
    })
    this.callsAdmitted = sampled('counter', 'calls_admitted_total', 'Calls this instance had room for (admission control): placed to ring now, ringing in, or from a browser (web)', ['direction'])
    this.callsRefused = sampled('counter', 'calls_refused_total', 'Calls refused for want of room on this instance (503, busy), by direction and the signal that refused them', ['direction', 'reason'])
    this.sttDecoders = sampled('gauge', 'stt_decoders', 'Live speech decoders of the shared pool (busy, idle) and utterances waiting for one (queued)', ['state'])
    this.ttsSynthesizers = sampled('gauge', 'tts_synthesizers', 'In-process espeak-ng synthesiser threads (busy, idle) and sentences waiting for one (queued)', ['state'])
    this.sttUtterancesRefused = sampled('counter', 'stt_utterances_refused_total', "Utterances refused because every decoder was busy and the decoders' queue was full")
    this.callsEnded = new Counter({ name: `${PREFIX}calls_ended_total`, help: 'Call tries that ended after they started, by status and hangup', labelNames: ['status', 'hangup'], registers })
    this.turnLatency = new Histogram({
      name: `${PREFIX}turn_latency_seconds`,
      help: "A voice turn's stages, from the end of the caller's speech (media/latency.ts)",
      labelNames: ['stage'],
      buckets: TURN_BUCKETS,
      registers,
    })
    this.webhookDeliveries = new Counter({
      name: `${PREFIX}webhook_deliveries_total`,
      help: 'Webhook delivery attempts by surface (v1, legacy) and result (delivered, failed)',
      labelNames: ['surface', 'result'],
      registers,
    })
    this.actorsLive = sampled('gauge', 'actors_live', 'Actors held in memory on this instance, by kind', ['kind'])
    this.actorsPassivated = sampled('counter', 'actors_passivated_total', 'Unfinished actors this instance passivated (stored and dropped from memory), by kind', ['kind'])
    this.timersDue = sampled('gauge', 'timers_due', 'Durable timers due and not yet delivered (the backlog), on every instance together')
    this.timersPending = sampled('gauge', 'timers_pending', 'Durable timers scheduled, due or not, on every instance together')
    this.storeCommit = new Histogram({
      name: `${PREFIX}store_commit_seconds`,
      help: 'Store commit time: a SQLite write batch, or one MongoDB write',
      labelNames: ['store'],
      buckets: COMMIT_BUCKETS,
      registers,
    })
    // Known label values start at 0, so rate() sees the first increase.
    for (const direction of ['outbound', 'inbound']) this.callsPlaced.inc({ direction }, 0)
    for (const surface of ['v1', 'legacy']) for (const result of ['delivered', 'failed']) this.webhookDeliveries.inc({ surface, result }, 0)
    processMetrics()
  }

  /** One voice turn's stages (a stage that did not happen is left out). */
  voiceTurn(stages: TurnStages): void {
    for (const [key, label] of Object.entries(STAGE_LABELS) as [keyof TurnStages, string][]) {
      const ms = stages[key]
      if (ms !== null) this.turnLatency.observe({ stage: label }, ms / 1000)
    }
  }

  /** The store's commit observer (store/port.ts CommitObserver). */
  commits(store: 'sqlite' | 'mongodb'): (seconds: number) => void {
    const child = this.storeCommit.labels({ store })
    return (seconds) => child.observe(seconds)
  }

  /** The Prometheus text: the process's metrics, then this instance's. */
  async scrape(): Promise<string> {
    return (await processMetrics().metrics()) + (await this.registry.metrics())
  }
}
