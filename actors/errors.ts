/**
 * Errors the runtime throws to callers. They cross instances when an event is forwarded to the
 * owner, so each has a stable `name` and is rebuilt from `{ name, message }` on the other side.
 */

/** No stored actor and no input to spawn one with (HTTP: 404). */
export class ActorNotFoundError extends Error {
  override readonly name = 'ActorNotFoundError'
}

/** spawn() of an id that already exists (HTTP: 409). */
export class ActorExistsError extends Error {
  override readonly name = 'ActorExistsError'
}

/** The stored snapshot was written by another chart version and no migration accepted it. */
export class VersionMismatchError extends Error {
  override readonly name = 'VersionMismatchError'
}

/** Another instance owns the actor and did not answer in time (HTTP: 503, retry). */
export class ActorUnavailableError extends Error {
  override readonly name = 'ActorUnavailableError'
}

/** The instance that holds the actor did not answer a forwarded event in time (it died or stalled). */
export class ForwardTimeoutError extends ActorUnavailableError {}

/** A kind that was never registered with this runtime (a programming error). */
export class UnknownKindError extends Error {
  override readonly name = 'UnknownKindError'
}

const KNOWN = { ActorNotFoundError, ActorExistsError, VersionMismatchError, ActorUnavailableError, UnknownKindError }

export interface WireError {
  name: string
  message: string
}

export const toWire = (err: unknown): WireError => (err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) })

export function fromWire(wire: WireError): Error {
  const Known = KNOWN[wire.name as keyof typeof KNOWN]
  return Known ? new Known(wire.message) : new Error(wire.message)
}
