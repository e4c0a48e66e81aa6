/** The actor runtime's public surface (see runtime.ts for how it works). */

export type { Asked } from './ask'
export { timerId } from './deadlines'
export { ActorExistsError, ActorNotFoundError, ActorUnavailableError, UnknownKindError, VersionMismatchError } from './errors'
export { createInspection, type Inspection, type InspectionOptions, type MachineDefinition } from './inspection'
export { DEFAULT_IDLE_MS } from './passivation'
export { type ActorKind, ActorRuntime, type ActorRuntimeOptions, type SendOptions } from './runtime'
export { ACTOR_SNAPSHOTS, actorKey, parseActorKey } from './snapshot-store'
export type { TimerDueEvent } from './timer-delivery'
export type { ActorDescription, ActorKindSpec, ActorRecord, Deadline, StoredActor, StoredVersion } from './types'
