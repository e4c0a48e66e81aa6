/**
 * The call chart on the actor runtime (machines/call.ts): its effects (control/effects.ts), each stored
 * move also told to the live feed, and the transfers it runs.
 */
import type { ActorRuntime } from '../../../../actors/runtime'
import { type CallActors, type CallEffectPort, callKind } from '../control/actor'
import { type CallEffectDeps, callEffects } from '../control/effects'
import { CallTransfers } from '../control/transfers'
import type { CallFeed } from '../live/live-feed'

export interface CallChart {
  effects: CallEffectPort
  actors: CallActors
  transfers: CallTransfers
}

export function buildCallChart(runtime: ActorRuntime, feed: CallFeed, deps: CallEffectDeps): CallChart {
  const effects = callEffects(deps)
  // Each stored move of a call's chart also goes to the feed (the console app highlights it).
  const charted: CallEffectPort = {
    ...effects,
    async project(id, snapshot) {
      await effects.project(id, snapshot)
      feed.publish({ kind: 'actor', callId: id, state: String(snapshot.value) })
    },
  }
  const actors = callKind.register(runtime, charted)
  const transfers = new CallTransfers({ tries: deps.tries, published: deps.published, actors, clock: deps.clock })
  return { effects, actors, transfers }
}
