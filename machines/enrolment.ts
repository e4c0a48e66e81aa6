/**
 * A sequence enrolment (docs/spec.md Sequence, enrol rules): one person going through a sequence's
 * steps, each sent `delayMinutes` after the previous one (the first after enrolling). Waiting for
 * the next step is a durable deadline (`nextAt`), so a restart neither skips nor repeats a step.
 *
 * Not shown in docs/spec.md, chosen here: a reply stops it when the sequence has `exitOnReply`; an
 * opt-out, the sequence's archiving or the customer's deletion stop it always; a step that cannot
 * be sent (window closed for a text step, template not approved) is skipped with its reason and
 * the next one follows; `finished` after the last step.
 */
import { assign, fromPromise, type SnapshotFrom, setup } from 'xstate'

export const MACHINE_VERSION = 1
export const ENROLMENT_EFFECTS = ['sendStep'] as const

export interface EnrolmentContext {
  id: string
  /** The step to send next (0-based). */
  step: number
  /** Milliseconds before each step, from the previous one (or from enrolling). */
  delays: number[]
  nextAt: number
  stopReason: string | null
}

export interface EnrolmentInput {
  id: string
  at: number
  delays: number[]
}

export type EnrolmentEvent = { type: 'timer.due'; at: number } | { type: 'enrolment.stop'; at: number; reason: 'replied' | 'opted_out' | 'archived' | 'customer_deleted' }

export interface SendStepInput {
  id: string
  step: number
}

export const enrolmentMachine = setup({
  types: { context: {} as EnrolmentContext, events: {} as EnrolmentEvent, input: {} as EnrolmentInput },
  actors: {
    sendStep: fromPromise<{ at: number }, SendStepInput>(async () => {
      throw new Error('provided by the sequences binding')
    }),
  },
  guards: {
    isDue: ({ context, event }) => event.type === 'timer.due' && event.at >= context.nextAt,
    wasLast: ({ context }) => context.step + 1 >= context.delays.length,
  },
  actions: {
    advance: assign(({ context, event }) => {
      const at = (event as { output?: { at: number }; error?: { at?: number } }).output?.at ?? (event as { error?: { at?: number } }).error?.at ?? context.nextAt
      return { step: context.step + 1, nextAt: at + (context.delays[context.step + 1] ?? 0) }
    }),
    recordStop: assign({ stopReason: ({ event }) => (event.type === 'enrolment.stop' ? event.reason : null) }),
  },
}).createMachine({
  id: 'enrolment',
  description: 'One person through a sequence: wait (durable deadline), send a step, repeat; stopped by reply, opt-out or deletion.',
  context: ({ input }) => ({ id: input.id, step: 0, delays: input.delays, nextAt: input.at + (input.delays[0] ?? 0), stopReason: null }),
  initial: 'waiting',
  states: {
    waiting: {
      description: 'Until nextAt (a durable deadline): then the step is sent.',
      on: {
        'timer.due': { guard: 'isDue', target: 'sending' },
        'enrolment.stop': { target: 'stopped', actions: 'recordStop' },
      },
    },
    sending: {
      description: 'sendStep marks the step as being sent before it sends, so a crash never sends it twice.',
      invoke: {
        id: 'sendStep',
        src: 'sendStep',
        input: ({ context }) => ({ id: context.id, step: context.step }),
        onDone: [
          { guard: 'wasLast', target: 'finished' },
          { target: 'waiting', actions: 'advance' },
        ],
        // The effect records a failed step itself; the sequence goes on with the next one.
        onError: [
          { guard: 'wasLast', target: 'finished' },
          { target: 'waiting', actions: 'advance' },
        ],
      },
      on: { 'enrolment.stop': { target: 'stopped', actions: 'recordStop' } },
    },
    finished: { type: 'final', description: 'Every step was sent (or skipped with its reason).' },
    stopped: { type: 'final', description: 'A reply (exitOnReply), an opt-out, the sequence archived or the customer deleted stopped it; stopReason says which.' },
  },
})

export type EnrolmentSnapshot = SnapshotFrom<typeof enrolmentMachine>

export function enrolmentDeadlines(s: { value: unknown; context: EnrolmentContext }): { name: string; at: number }[] {
  return s.value === 'waiting' ? [{ name: 'step', at: s.context.nextAt }] : []
}
