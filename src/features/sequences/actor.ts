/**
 * The enrolment actor kind: machines/enrolment.ts bound to its one effect (send the step), one
 * actor per enrolment (`enr_…`), its waits durable timers (enrolmentDeadlines); each stored change
 * goes to the enrolment's row (SequenceService.effects).
 */
import { type ActorsOf, defineActorKind } from '../../../actors/kind'
import { type EnrolmentSnapshot, enrolmentDeadlines, enrolmentMachine, MACHINE_VERSION, type SendStepInput } from '../../../machines/enrolment'

export interface EnrolmentEffectPort {
  /** Sends step `step` once (marking it before sending); resolves with when it was done. */
  sendStep(input: SendStepInput): Promise<{ at: number }>
  project(id: string, snapshot: EnrolmentSnapshot): Promise<void>
}

export const enrolmentKind = defineActorKind({
  kind: 'enrolment',
  machine: enrolmentMachine,
  version: MACHINE_VERSION,
  deadlines: enrolmentDeadlines,
  subject: (input: SendStepInput) => `${input.id}#${input.step}`,
  provide: (port: EnrolmentEffectPort, { effect }) => ({
    actors: { sendStep: effect('sendStep', (i: SendStepInput) => port.sendStep(i)) },
  }),
  persisted: (port, id, snapshot) => port.project(id, snapshot),
})

export type EnrolmentActors = ActorsOf<typeof enrolmentKind>
