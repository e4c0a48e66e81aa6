/** The actor runtime's public surface (see runtime.ts for how it works). */
export { ActorRuntime, DEFAULT_IDLE_MS, type ActorKind, type ActorRuntimeOptions, type SendOptions } from './runtime'
export type { Asked } from './ask'
export { ActorExistsError, ActorNotFoundError, ActorUnavailableError, UnknownKindError, VersionMismatchError } from './errors'
export { createInspection, type Inspection, type InspectionOptions, type MachineDefinition } from './inspection'
export { actorKey, parseActorKey, ACTOR_SNAPSHOTS } from './snapshot-store'
export { timerId } from './deadlines'
export type { TimerDueEvent } from './timer-delivery'
export type { ActorDescription, ActorKindSpec, ActorRecord, Deadline, StoredActor, StoredVersion } from './types'
