/**
 * Several instances on the sandbox network (REDIS_URL): each instance runs a switch of it, and a
 * switch's calls live in its process's memory, so they die with it. While its instance lives a
 * switch holds a presence lease; every instance looks every few seconds for registered switches
 * whose lease lapsed and ends their calls as a restart does for one instance (LostCalls.dropLost):
 * connected ones `completed` with `hangup: failed`, ringing ones `failed`, what was said kept.
 * One survivor takes the dead switch's lease before it drops its calls, so two never both do.
 */
import type { Clock } from '../../../clock'
import type { Coordination } from '../../../coordination/port'
import type { Logger } from '../../../logger'
import { switchOf } from '../../../providers/telephony/sandbox'
import type { Collection, DocumentStore } from '../../../store/port'
import type { CallTryDoc } from '../records/repository'
import type { LostCalls } from './lost-calls'

/**
 * A dead instance's calls end within about this long plus one look. Renewed every EVERY_MS, it
 * lapses no sooner than 15 s after the death, when the actor leases (15 s, actors/leases.ts) have,
 * so the survivor can end the calls' actors at once.
 */
export const SWITCH_TTL_MS = 20_000
/** Renewed and looked at this often: three late renewals in a row still keep a switch. */
const EVERY_MS = 5_000
const REASON = 'the call was dropped: the service instance carrying it stopped while it was in progress'

interface SwitchDoc {
  [field: string]: unknown
  id: string
  startedAt: number
  /** When a survivor first found it dead (service clock): its calls are looked for until SWITCH_TTL_MS after. */
  lostAt?: number
}

const leaseName = (id: string) => `sandbox-switch:${id}`

/** The switch an instance runs: its id without the `inst_` prefix (index.ts). */
export const switchOfInstance = (instanceId: string) => instanceId.replace(/^inst_/, '')

export class LostSwitches {
  private timer: ReturnType<typeof setTimeout> | null = null
  private round: Promise<void> | null = null

  private constructor(
    private readonly switches: Collection<SwitchDoc>,
    private readonly d: { switchId: string; owner: string; coordination: Coordination; calls: LostCalls; clock: Clock; logger: Logger },
  ) {}

  static async open(store: DocumentStore, d: LostSwitches['d']): Promise<LostSwitches> {
    return new LostSwitches(await store.collection<SwitchDoc>({ name: 'sandbox_switches', indexes: [] }), d)
  }

  async start(): Promise<void> {
    await this.d.coordination.acquireLease(leaseName(this.d.switchId), this.d.owner, SWITCH_TTL_MS)
    await this.switches.upsert({ id: this.d.switchId, startedAt: Date.now() })
    this.plan()
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.round
    // The calls still on this switch end with the process: the others may drop them at once.
    await this.d.coordination.releaseLease(leaseName(this.d.switchId), this.d.owner).catch(() => {})
  }

  /** One round: renew this switch, then end the calls of every switch whose instance is gone. */
  async sweep(): Promise<number> {
    const { coordination, owner, switchId, calls, clock, logger } = this.d
    if (!(await coordination.acquireLease(leaseName(switchId), owner, SWITCH_TTL_MS))) logger.error({ switch: switchId }, 'sandbox switch lease lost: another instance took this switch for dead')
    let dropped = 0
    for (const doc of await this.switches.find({})) {
      if (doc.id === switchId || (await coordination.leaseOwner(leaseName(doc.id))) !== null) continue
      if (!(await coordination.acquireLease(leaseName(doc.id), owner, SWITCH_TTL_MS))) continue
      const onSwitch = (row: CallTryDoc) => row.callRef !== null && switchOf(row.callRef) === doc.id
      // A stream lives on the instance its socket reached, not always the one that placed the call.
      const streamHere = (row: CallTryDoc) => (typeof row.mediaHost === 'string' ? switchOfInstance(row.mediaHost) === doc.id : onSwitch(row))
      const ended = await calls.dropLost(clock.now(), onSwitch, REASON, streamHere)
      dropped += ended.dropped
      if (ended.left > 0) {
        // An actor still leased to the dead instance: the next round, once that lapses.
        await coordination.releaseLease(leaseName(doc.id), owner)
        continue
      }
      // Placements it had stored the row of but not the actor: older than any placement in flight.
      // Those it stored just before it died are not yet, so the switch is looked at again (its lease
      // let go for the next round) until the cutoff has passed the moment it was found dead.
      const lostAt = typeof doc.lostAt === 'number' ? doc.lostAt : clock.now()
      if (typeof doc.lostAt !== 'number') {
        await this.switches.update(doc.id, { lostAt })
        logger.warn({ switch: doc.id, dropped: ended.dropped }, 'a sandbox switch stopped; its calls were ended as dropped')
      }
      dropped += await calls.failUnplaced(clock.now() - SWITCH_TTL_MS)
      if (clock.now() - SWITCH_TTL_MS < lostAt) {
        await coordination.releaseLease(leaseName(doc.id), owner)
        continue
      }
      await this.switches.delete(doc.id)
    }
    return dropped
  }

  private plan(): void {
    this.timer = setTimeout(() => {
      this.round = this.sweep()
        .then(
          () => {},
          (err: unknown) => this.d.logger.warn({ err }, 'could not look for stopped sandbox switches'),
        )
        .finally(() => {
          this.round = null
          if (this.timer) this.plan()
        })
    }, EVERY_MS)
  }
}
