/**
 * What the kernel reports: actors live and passivated (the runtime), durable timers due and
 * pending (coordination, on the service clock), and calls placed, ended and live, read from the
 * call actor's stored moves (machines/call.ts), so no feature code takes part. Each move is heard
 * once, on the instance that stored it, so the counters add up across instances.
 */
import type { ActorRuntime } from '../../actors'
import { CALL_KIND, type CallContext, type CallState } from '../../machines/call'
import type { Clock } from '../clock'
import type { Coordination } from '../coordination/port'
import type { Metrics } from './metrics'

/** A try in progress: the phone rings, or someone talks (with the agent, or with the person it was transferred to). */
const LIVE_CALL_STATES: readonly CallState[] = ['ringing', 'connected', 'transferring', 'transferred']
const isLive = (state: unknown) => LIVE_CALL_STATES.includes(state as CallState)

export function watchKernel(metrics: Metrics, k: { runtime: ActorRuntime; coordination: Coordination; clock: Clock }): void {
  const { runtime, coordination, clock } = k
  metrics.actorsLive.from(() => [...runtime.liveByKind()].map(([kind, value]) => ({ labels: { kind }, value })))
  metrics.actorsPassivated.from(() => [...runtime.passivations()].map(([kind, value]) => ({ labels: { kind }, value })))
  metrics.timersDue.from(() => coordination.timersDue(clock.now()))
  metrics.timersPending.from(() => coordination.pendingTimers())

  metrics.callsLive.from(() => Promise.all(LIVE_CALL_STATES.map(async (state) => ({ labels: { state }, value: runtime.hasKind(CALL_KIND) ? await runtime.countInState(CALL_KIND, state) : 0 }))))
  runtime.onTransition((t) => {
    if (t.kind !== CALL_KIND) return
    const call = t.context as CallContext
    if (!isLive(t.from) && isLive(t.to)) metrics.callsPlaced.inc({ direction: call.inbound ? 'inbound' : 'outbound' })
    else if (isLive(t.from) && !isLive(t.to)) {
      // A missed try with a retry left waits in `scheduled` (missed passes through at once).
      const status = t.to === 'scheduled' ? 'missed' : String(t.to)
      metrics.callsEnded.inc({ status, hangup: call.hangup ?? 'none' })
    }
  })
}
