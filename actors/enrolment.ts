/**
 * The enrolment actor kind: machines/enrolment.ts bound to its one effect (send the step), one
 * actor per enrolment (`enr_…`), its waits durable timers (enrolmentDeadlines); each stored
 * change goes to the sequences feature's projection (the enrolment's row).
 */
import { type EnrolmentSnapshot, enrolmentDeadlines, enrolmentMachine, MACHINE_VERSION, type SendStepInput } from '../machines/enrolment'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'
import { bindEffect } from './effects'
import type { ActorRuntime } from './runtime'
import type { ActorKind } from './types'

export const ENROLMENT_KIND = 'enrolment'

export type EnrolmentActors = ActorKind<typeof enrolmentMachine>

export interface EnrolmentEffectPort {
  /** Sends step `step` once (marking it before sending); resolves with when it was done. */
  sendStep(input: SendStepInput): Promise<{ at: number }>
  project(id: string, snapshot: EnrolmentSnapshot): Promise<void>
}

export function registerEnrolment(runtime: ActorRuntime, deps: { effects: EnrolmentEffectPort; clock: Clock; logger: Logger }): EnrolmentActors {
  const machine = enrolmentMachine.provide({
    actors: {
      sendStep: bindEffect(
        { kind: ENROLMENT_KIND, clock: deps.clock, logger: deps.logger },
        'sendStep',
        (i: SendStepInput) => deps.effects.sendStep(i),
        (i) => `${i.id}#${i.step}`,
      ),
    },
  })
  return runtime.register(ENROLMENT_KIND, {
    machine,
    version: MACHINE_VERSION,
    deadlines: enrolmentDeadlines,
    persisted: (id, snapshot) => deps.effects.project(id, snapshot as EnrolmentSnapshot),
  })
}
