/**
 * The call actor kind: the call chart (machines/call.ts) bound to its effects (effects.ts). One
 * actor per call id (`out_…` / `sch_…`), across every try; spawned by POST /calls. Its waiting
 * deadline (booked time or retry) is a durable timer (callDeadlines); each stored change goes to the
 * call's rows, and emitted `call.completed` / `call.analysed` / `call.transfer_ended` to the bus.
 */
import { type ActorsOf, defineActorKind } from '../../../../actors/kind'
import type { OutboxEntry } from '../../../../actors/types'
import {
  type AnalyseCallOutput,
  CALL_KIND,
  type CallEffectInput,
  type CallSnapshot,
  callDeadlines,
  callMachine,
  type EndLegInput,
  type HangUpInput,
  type JoinTransferInput,
  MACHINE_VERSION,
  type PlaceCallOutput,
  type TransferCallInput,
  type TransferCallOutput,
} from '../../../../machines/call'

/** The I/O behind the chart's effects. */
export interface CallEffectPort {
  placeCall(input: CallEffectInput): Promise<PlaceCallOutput>
  openConversation(input: CallEffectInput): Promise<void>
  hangUp(input: HangUpInput): Promise<void>
  analyseCall(input: CallEffectInput): Promise<AnalyseCallOutput>
  /** `signal`: aborted when the call leaves the transfer state (the caller hung up while the person's leg was being prepared). */
  transferCall(input: TransferCallInput, signal?: AbortSignal): Promise<TransferCallOutput>
  joinTransfer(input: JoinTransferInput): Promise<TransferCallOutput>
  endLeg(input: EndLegInput): Promise<void>
  /** A stored change of the call: its rows follow (the read model GET and lists answer from). */
  project(callId: string, snapshot: CallSnapshot): Promise<void>
  /** `call.completed` / `call.analysed`, with a stable id for the bus. */
  publish(callId: string, event: OutboxEntry['event'], eventId: string): Promise<void>
}

export const callKind = defineActorKind({
  kind: CALL_KIND,
  machine: callMachine,
  version: MACHINE_VERSION,
  deadlines: callDeadlines,
  // A live call hears from the network every few seconds (answered, ended): held in memory between
  // them rather than re-read each time. A minute idle (the runtime's default) passivates a waiting
  // call; its durable timer wakes it.
  idleMs: 60_000,
  subject: (input: CallEffectInput) => `${input.id}#${input.attempt}`,
  provide: (port: CallEffectPort, { effect }) => ({
    actors: {
      placeCall: effect('placeCall', (i: CallEffectInput) => port.placeCall(i)),
      openConversation: effect('openConversation', (i: CallEffectInput) => port.openConversation(i)),
      hangUp: effect('hangUp', (i: HangUpInput) => port.hangUp(i)),
      analyseCall: effect('analyseCall', (i: CallEffectInput) => port.analyseCall(i)),
      transferCall: effect('transferCall', (i: TransferCallInput, signal) => port.transferCall(i, signal)),
      joinTransfer: effect('joinTransfer', (i: JoinTransferInput) => port.joinTransfer(i)),
      endLeg: effect('endLeg', (i: EndLegInput) => port.endLeg(i)),
    },
  }),
  persisted: (port, id, snapshot) => port.project(id, snapshot),
  emitted: (port, id, event, eventId) => port.publish(id, event, eventId),
})

export type CallActors = ActorsOf<typeof callKind>
