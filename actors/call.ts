/**
 * The call actor kind: the call chart (machines/call.ts) bound to its effects and registered with
 * the runtime. One actor per call id (`out_…` / `sch_…`), across every try; spawned by POST /calls.
 * Its waiting deadline (booked time or retry) is a durable timer (callDeadlines); emitted
 * `call.completed` / `call.analysed` / `call.transfer_ended` and each stored change go to the calls feature's hooks.
 */
import {
  type AnalyseCallOutput,
  type CallEffectInput,
  type CallSnapshot,
  callDeadlines,
  callMachine,
  type HangUpInput,
  MACHINE_VERSION,
  type PlaceCallOutput,
  type TransferCallInput,
  type TransferCallOutput,
} from '../machines/call'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect, type EffectBinding } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind, OutboxEntry } from './types'

export const CALL_KIND = 'call'

export type CallActors = ActorKind<typeof callMachine>

/** The I/O behind the chart's effects (src/features/calls/effects.ts implements it). */
export interface CallEffectPort {
  placeCall(input: CallEffectInput): Promise<PlaceCallOutput>
  openConversation(input: CallEffectInput): Promise<void>
  hangUp(input: HangUpInput): Promise<void>
  analyseCall(input: CallEffectInput): Promise<AnalyseCallOutput>
  transferCall(input: TransferCallInput): Promise<TransferCallOutput>
  /** A stored change of the call: its rows follow (the read model GET and lists answer from). */
  project(callId: string, snapshot: CallSnapshot): Promise<void>
  /** `call.completed` / `call.analysed`, with a stable id for the bus. */
  publish(callId: string, event: OutboxEntry['event'], eventId: string): Promise<void>
}

export function registerCall(runtime: ActorRuntime, deps: { effects: CallEffectPort; clock: Clock; logger: Logger }): CallActors {
  const binding: EffectBinding = { kind: CALL_KIND, clock: deps.clock, logger: deps.logger }
  const subject = (input: CallEffectInput) => `${input.id}#${input.attempt}`
  const machine = callMachine.provide({
    actors: {
      placeCall: bindEffect(binding, 'placeCall', (i: CallEffectInput) => deps.effects.placeCall(i), subject),
      openConversation: bindEffect(binding, 'openConversation', (i: CallEffectInput) => deps.effects.openConversation(i), subject),
      hangUp: bindEffect(binding, 'hangUp', (i: HangUpInput) => deps.effects.hangUp(i), subject),
      analyseCall: bindEffect(binding, 'analyseCall', (i: CallEffectInput) => deps.effects.analyseCall(i), subject),
      transferCall: bindEffect(binding, 'transferCall', (i: TransferCallInput) => deps.effects.transferCall(i), subject),
    },
  })
  return runtime.register(CALL_KIND, {
    machine,
    version: MACHINE_VERSION,
    deadlines: callDeadlines,
    persisted: (id, snapshot) => deps.effects.project(id, snapshot as CallSnapshot),
    emitted: (id, event, eventId) => deps.effects.publish(id, event, eventId),
    // A live call hears from the network every few seconds (answered, ended): held in memory between
    // them rather than re-read each time. A minute idle (the runtime's default) passivates a waiting
    // call; its durable timer wakes it.
    idleMs: 60_000,
  })
}
