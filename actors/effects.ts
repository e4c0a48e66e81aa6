/**
 * The one way a chart's I/O effect is bound: an invoked promise actor (XState `fromPromise`) that
 * runs the feature's port method. A failure is logged with the actor and effect names and turned
 * into an EffectError carrying the instant it failed on the service clock, so a chart can time a
 * retry (a durable deadline) or record the failure without reading a clock itself.
 *
 * A crash while an effect runs leaves a running child in the stored snapshot; the runtime resumes
 * the actor at boot and XState runs the effect again, so every bound effect must be idempotent.
 */
import { fromPromise, type PromiseActorLogic } from 'xstate'
import type { Clock } from '../src/clock'
import type { Logger } from '../src/logger'

/** An effect's rejection as the chart reads it: a message and when it failed (service clock). */
export class EffectError extends Error {
  override readonly name = 'EffectError'
  constructor(
    message: string,
    readonly at: number,
    /** A reason a chart may branch on (the failure's own `code`, e.g. `not_placed`); null for any other failure. */
    readonly code: string | null = null,
  ) {
    super(message)
  }
}

/** What an effect port throws when a chart should tell this failure from others (EffectError.code). */
export class CodedEffectFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'CodedEffectFailure'
  }
}

export interface EffectBinding {
  /** The actor kind, for logs. */
  kind: string
  clock: Clock
  logger: Logger
}

/** Binds one named effect; `subject` picks what identifies the resource in the log line. */
/**
 * `run` gets the promise actor's `signal`, aborted when the chart leaves the state that invoked it
 * (the call ended while the effect ran): an effect that waits on a slow network can stop there.
 */
export function bindEffect<I, O>(binding: EffectBinding, name: string, run: (input: I, signal: AbortSignal) => Promise<O>, subject?: (input: I) => unknown): PromiseActorLogic<O, I> {
  return fromPromise<O, I>(async ({ input, signal }) => {
    try {
      return await run(input, signal)
    } catch (err) {
      binding.logger.warn({ err, actor: binding.kind, effect: name, subject: subject?.(input) }, 'actor effect failed')
      throw new EffectError(err instanceof Error ? err.message : String(err), binding.clock.now(), err instanceof CodedEffectFailure ? err.code : null)
    }
  })
}
