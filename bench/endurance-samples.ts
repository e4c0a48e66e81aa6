/**
 * bench:endurance's readings every 30 s: memory, CPU and load from /proc on the dot; heap and lag
 * from the service's /metrics, which answers late when its event loop is behind (the lag
 * histogram covers the time between scrapes), and how far the load has got.
 */
import { loadavg, rssKb, schedNs } from './proc'
import { cpuMs } from './service'

export interface Sample {
  at: number
  rssMb: number
  heapMb: number
  lagP99Ms: number
  metricsS: number
  cpuPct: number
  loopRunPct: number
  loopWaitPct: number
  selfPct: number
  load: string
  accepted: number
  waiting: number
  callsLive: number
  delivered: number
}

/** How far the load has got: messages accepted and waiting, calls live and placed, deliveries heard, answers that were a 5xx or none. */
export interface Progress {
  accepted: number
  waiting: number
  callsLive: number
  placed: number
  delivered: number
  failed: number
}

export interface SamplerParts {
  /** The service's process. */
  pid: number
  /** Seconds since the load started. */
  elapsed: () => number
  /** The service's /metrics ('' when it did not answer). */
  metricsText: () => Promise<string>
  progress: () => Progress
}

const metric = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)

export class Sampler {
  private last: ReturnType<Sampler['reading']>

  constructor(private readonly p: SamplerParts) {
    this.last = this.reading()
  }

  /** A sample of the span since the last one. */
  async take(): Promise<Sample> {
    const now = this.reading()
    const last = this.last
    const span = now.at - last.at
    const { accepted, waiting, callsLive, delivered } = this.p.progress()
    const taken = {
      at: this.p.elapsed(),
      rssMb: rssKb(this.p.pid) / 1024,
      cpuPct: (100 * (now.cpu - last.cpu)) / span,
      loopRunPct: (now.sched.run - last.sched.run) / 1e4 / span,
      loopWaitPct: (now.sched.wait - last.sched.wait) / 1e4 / span,
      selfPct: (100 * (now.self - last.self)) / span,
      load: loadavg(),
      accepted,
      waiting,
      callsLive,
      delivered,
    }
    this.last = now
    const text = await this.p.metricsText()
    return {
      ...taken,
      heapMb: metric(text, 'nodejs_heap_size_used_bytes') / 2 ** 20,
      lagP99Ms: metric(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
      metricsS: (performance.now() - now.at) / 1000,
    }
  }

  print(s: Sample): void {
    const { placed, failed } = this.p.progress()
    console.log(
      `  ${s.at.toFixed(0).padStart(5)} s  RSS ${s.rssMb.toFixed(0).padStart(5)} MB  heap ${s.heapMb.toFixed(0).padStart(4)} MB  lag p99 ${s.lagP99Ms.toFixed(0).padStart(5)} ms (/metrics answered in ${s.metricsS.toFixed(1)} s)  CPU ${s.cpuPct.toFixed(0).padStart(3)}%, event loop ran ${s.loopRunPct.toFixed(0)}% waited for a core ${s.loopWaitPct.toFixed(0)}% (bench ${s.selfPct.toFixed(0)}%)  load ${s.load}  | messages ${s.accepted} (${s.waiting} waiting), calls live ${s.callsLive}/${placed} placed, deliveries ${s.delivered}, 5xx or no answer ${failed}`,
    )
  }

  private reading() {
    return { at: performance.now(), cpu: cpuMs(this.p.pid), self: cpuMs(process.pid), sched: schedNs(this.p.pid) }
  }
}
