/**
 * Calls refused at capacity, per workspace and hour (the console's Quality page). A refusal is
 * counted in memory where it happens (admission.ts refuses before any store read, and stays that
 * cheap); the counts go to the store in batches every REFUSAL_FLUSH_MS, so a crash loses at most
 * that interval's refusals.
 *
 * Each instance writes its own documents (one per workspace and hour, named by the instance's id,
 * which is new at every boot) holding its totals, not increments: a write that failed is simply
 * written again, and two instances or two boots never write the same document. A read sums them.
 *
 * Where the workspace is known:
 * - a call placed by the API, and a browser's call: the request's workspace;
 * - a waiting call (booked, a retry, a campaign's) that stayed without room until it gave up: its
 *   row's, and its call id (the only refused calls with a call record);
 * - a call ringing in: only the number it rang is known before the number's lookup, which the
 *   refusal skips; the flush looks up each number refused once, and counts the refusals for the
 *   workspace that holds it then (a number nobody holds, or not for voice, is not counted).
 */
import type { Clock } from '../../../clock'
import type { Logger } from '../../../logger'
import type { Collection, CollectionSpec } from '../../../store/port'
import { WorkspaceCollection, workspaceSpec } from '../../../store/workspace-scoped'
import type { AdmittedDirection } from './admission'

/**
 * How often the counts are written: a crash loses at most this much (docs/console-app.md), and a
 * write per workspace that saw refusals every 10 s is nothing next to the dozen writes of one call.
 */
export const REFUSAL_FLUSH_MS = 10_000
/** Call ids kept per workspace, hour and instance: a waiting call gives up after ten minutes, so they are few; past it only counted. */
export const REFUSED_CALLS_KEPT = 20

const HOUR_MS = 3_600_000

export interface CallRefusalDoc {
  id: string
  workspaceId: string
  /** The hour's start, ISO. */
  hour: string
  instance: string
  refused: number
  directions: Record<AdmittedDirection, number>
  /** Refused calls that have a call record (waiting calls that gave up), at most REFUSED_CALLS_KEPT. */
  calls: string[]
  createdAt: string
  updatedAt: string
  [field: string]: unknown
}

export const callRefusalsSpec: CollectionSpec = workspaceSpec('call_refusals', [
  {
    name: 'workspace_hour',
    fields: [
      ['workspaceId', 1],
      ['hour', 1],
    ],
  },
])

/** One hour's refusals of a workspace, every instance's summed. */
export interface HourRefusals {
  hour: number
  refused: number
  directions: Record<AdmittedDirection, number>
  calls: string[]
}

interface Counted {
  workspaceId: string
  hour: number
  refused: number
  directions: Record<AdmittedDirection, number>
  calls: string[]
  dirty: boolean
}

const DIRECTIONS: readonly AdmittedDirection[] = ['outbound', 'inbound', 'web']
const noDirections = (): Record<AdmittedDirection, number> => ({ outbound: 0, inbound: 0, web: 0 })

export class RefusalCounts {
  private readonly counted = new Map<string, Counted>()
  /** Calls ringing in that were refused, by the number they rang and hour: `${number} ${hour}`. */
  private readonly rang = new Map<string, number>()
  private flushing: Promise<void> = Promise.resolve()
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(
    private readonly deps: {
      refusals: Collection<CallRefusalDoc>
      clock: Clock
      instance: string
      /** The workspace holding a voice number, or null. */
      workspaceOfNumber: (number: string) => Promise<string | null>
      logger: Logger
    },
  ) {}

  /** A call of a known workspace was refused; `callId` when it has a call record. */
  refused(workspaceId: string, direction: AdmittedDirection, callId?: string): void {
    const c = this.entry(workspaceId, this.hourNow())
    c.refused += 1
    c.directions[direction] += 1
    if (callId && c.calls.length < REFUSED_CALLS_KEPT) c.calls.push(callId)
    c.dirty = true
  }

  /** A call ringing in to `number` was refused (busy) before its number was looked up. */
  refusedAt(number: string): void {
    const key = `${number} ${this.hourNow()}`
    this.rang.set(key, (this.rang.get(key) ?? 0) + 1)
  }

  /** Writes what changed since the last flush; flushes run one at a time. */
  flush(): Promise<void> {
    // A flush that failed does not stop the next.
    this.flushing = this.flushing.catch(() => {}).then(() => this.write())
    return this.flushing
  }

  /** The workspace's refusals per hour in [since, until), every instance's; this instance's flushed first. */
  async hours(workspaceId: string, since: number, until: number): Promise<HourRefusals[]> {
    // What could not be written now is read without this instance's latest; it is written later.
    await this.flush().catch(() => {})
    const docs = await new WorkspaceCollection(this.deps.refusals).in(workspaceId).find({ hour: { $gte: new Date(since).toISOString(), $lt: new Date(until).toISOString() } }, { sort: [['hour', 1]] })
    const byHour = new Map<number, HourRefusals>()
    for (const d of docs) {
      const hour = Date.parse(d.hour)
      const h = byHour.get(hour) ?? { hour, refused: 0, directions: noDirections(), calls: [] }
      h.refused += d.refused
      for (const k of DIRECTIONS) h.directions[k] += d.directions[k] ?? 0
      h.calls.push(...d.calls)
      byHour.set(hour, h)
    }
    return [...byHour.values()]
  }

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch(() => {})
    }, REFUSAL_FLUSH_MS)
    this.timer.unref?.()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.flush().catch(() => {})
  }

  private hourNow(): number {
    return Math.floor(this.deps.clock.now() / HOUR_MS) * HOUR_MS
  }

  private entry(workspaceId: string, hour: number): Counted {
    const key = `${workspaceId} ${hour}`
    let c = this.counted.get(key)
    if (!c) {
      c = { workspaceId, hour, refused: 0, directions: noDirections(), calls: [], dirty: false }
      this.counted.set(key, c)
    }
    return c
  }

  private async write(): Promise<void> {
    const { refusals, instance, logger } = this.deps
    // Numbers rung first: their refusals join their workspace's before the writes.
    const rang = [...this.rang]
    this.rang.clear()
    const owners = new Map<string, Promise<string | null>>()
    for (const [key, n] of rang) {
      const [number, hour] = key.split(' ') as [string, string] // cast: the key is `${number} ${hour}`, made in refusedAt
      if (!owners.has(number))
        owners.set(
          number,
          this.deps.workspaceOfNumber(number).catch(() => null),
        )
      const workspaceId = await owners.get(number)!
      if (!workspaceId) continue
      const c = this.entry(workspaceId, Number(hour))
      c.refused += n
      c.directions.inbound += n
      c.dirty = true
    }
    const dirty = [...this.counted.values()].filter((c) => c.dirty)
    const now = new Date(this.deps.clock.now()).toISOString()
    const current = this.hourNow()
    await Promise.all(
      dirty.map(async (c) => {
        c.dirty = false
        const hour = new Date(c.hour).toISOString()
        const doc: CallRefusalDoc = {
          id: `${c.workspaceId}:${hour}:${instance}`,
          workspaceId: c.workspaceId,
          hour,
          instance,
          refused: c.refused,
          directions: { ...c.directions },
          calls: [...c.calls],
          createdAt: hour,
          updatedAt: now,
        }
        try {
          await refusals.upsert(doc)
        } catch (err) {
          c.dirty = true
          logger.warn({ err, workspace: c.workspaceId, hour }, 'calls refused at capacity could not be counted in the store; they are tried again at the next flush')
        }
      }),
    )
    // An hour gone by takes no more refusals (the clock moves forward): once written, forgotten.
    for (const [key, c] of this.counted) if (!c.dirty && c.hour < current) this.counted.delete(key)
  }
}
