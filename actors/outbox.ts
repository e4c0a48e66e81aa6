/**
 * At boot and with each sweep for orphaned work (handover.ts resumePending): emitted events a
 * crash, or a hook that failed, left stored in actors' outboxes but not handed over (persister.ts
 * stores them with the snapshot, then hands them to the kind's `emitted` hook): each such actor is
 * resumed under its lease and its outbox handed over; a finished actor's straight from the store,
 * since it never changes again. Hand-overs carry stable ids, so one repeated after a crash is
 * recognised downstream (EventBus.publish).
 */
import type { Logger } from '../src/logger'
import type { Persister } from './persister'
import type { Residency } from './residency'
import type { SerialQueue } from './serial-queue'
import type { SnapshotStore } from './snapshot-store'
import type { Registration } from './types'

export async function deliverOutboxes(deps: { kinds: Registration[]; snapshots: SnapshotStore; queue: SerialQueue; residency: Residency; persister: Persister; logger: Logger }): Promise<void> {
  const { snapshots, queue, residency, persister, logger } = deps
  for (const reg of deps.kinds) {
    if (!reg.spec.emitted) continue
    for (const doc of await snapshots.withOutbox(reg.kind)) {
      try {
        await queue.run(doc.id, async () => {
          const target = await residency.acquire(reg, doc.resourceId, doc.id, undefined)
          if (target.type === 'live') await persister.deliverOutbox(target.live, reg.spec)
          else if (target.type === 'final') {
            for (const entry of doc.outbox ?? []) await reg.spec.emitted!(doc.resourceId, entry.event, entry.id)
            await snapshots.put({ ...doc, outbox: [], hasOutbox: false })
          }
        })
        residency.afterJob(reg, doc.id)
      } catch (err) {
        logger.warn({ err, actor: doc.id }, 'stored emitted events not handed over at boot')
      }
    }
  }
}
