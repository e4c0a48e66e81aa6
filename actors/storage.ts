/**
 * What a started runtime holds and a stopped one lets go: the snapshot collection, the writer of
 * snapshots and their deadlines (persister.ts), and the actors held in memory (residency.ts).
 */
import type { Logger } from '../src/logger'
import type { ActorLeases } from './leases'
import { Persister, type PersisterDeps } from './persister'
import { Residency, type ResidencyDeps } from './residency'
import type { SerialQueue } from './serial-queue'
import { SnapshotStore } from './snapshot-store'
import type { ActorRuntimeOptions } from './types'

export interface Storage {
  snapshots: SnapshotStore
  persister: Persister
  residency: Residency
}

export interface StorageParts extends Pick<ActorRuntimeOptions, 'store' | 'coordination' | 'clock' | 'inspect'>, Pick<PersisterDeps, 'scheduled' | 'transitioned'>, Pick<ResidencyDeps, 'passivate'> {
  logger: Logger
  queue: SerialQueue
  leases: ActorLeases
}

/** Opens the snapshot collection; nothing is resumed yet. */
export async function openStorage(p: StorageParts): Promise<Storage> {
  const snapshots = await SnapshotStore.open(p.store)
  const { coordination, clock, logger } = p
  const persister = new Persister({ snapshots, coordination, clock, logger, scheduled: p.scheduled, transitioned: p.transitioned })
  const residency = new Residency({ queue: p.queue, leases: p.leases, snapshots, persister, logger, inspect: p.inspect, passivate: p.passivate })
  return { snapshots, persister, residency }
}
