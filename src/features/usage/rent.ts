/**
 * Rent of rented phone numbers: one `phone_rent` ledger record per number per month, charged in
 * advance at the start of each month of holding it (the day it was rented, then each monthly
 * anniversary), priced by the price list. Brought numbers pay no rent.
 *
 * Rent is settled when money is looked at (the wallet, usage, a customer's spend, the balance
 * check before a call): each month that began since the last look gets its record, dated when it
 * began, and the record's id (`use_rent_<number>_<month n>`) keeps a second look from charging twice.
 * Releasing a number settles first (the months begun until that day stay charged, no refund of the
 * running one), then removes its record: it is no longer held, so no later month is charged or held.
 */

import { PLANS, RENT_HOLD_DAYS } from '../../catalog/plans'
import { PRICES } from '../../catalog/prices'
import { type Clock, iso } from '../../clock'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Collection, CollectionSpec } from '../../store/port'
import type { PhoneNumberDoc } from '../phone-numbers/public'
import type { WorkspaceRepo } from '../workspaces/public'
import { addMonths, type UsageLedger } from './ledger'

const DAY_MS = 86_400_000

export interface RentMarkDoc {
  [field: string]: unknown
  id: string
  months: number
}

export const rentMarksSpec: CollectionSpec = { name: 'rent_marks', indexes: [] }
/** Months of rent settled in one look at most: 10 years; a clock further off is a mistake, not rent. */
const MAX_MONTHS = 120

export class RentBook {
  constructor(
    private readonly deps: {
      ledger: UsageLedger
      workspaces: WorkspaceRepo
      numbersOf: (workspaceIds: string[]) => Promise<PhoneNumberDoc[]>
      /** Per number, how many months are recorded already, so a look does not re-write them all. */
      marks: Collection<RentMarkDoc>
      clock: Clock
    },
  ) {}

  /** Rented numbers of the developer and every customer of it. */
  private async rented(developer: WorkspaceDoc): Promise<PhoneNumberDoc[]> {
    const customers = await this.deps.workspaces.find({ parentId: developer.id })
    const numbers = await this.deps.numbersOf([developer.id, ...customers.map((c) => c.id)])
    return numbers.filter((n) => n.source === 'rented')
  }

  /** Months begun so far for a number held since `since` (1 on the day it was rented). */
  private monthsBegun(sinceMs: number, nowMs: number): number {
    let n = 0
    while (n < MAX_MONTHS && addMonths(sinceMs, n) <= nowMs) n++
    return n
  }

  /**
   * Writes every month of rent that has begun; answers how many records were written now, the
   * earliest one's date, and the money to hold (heldMicro), read from the same numbers.
   */
  async settle(developer: WorkspaceDoc): Promise<{ written: number; earliest: string | null; heldMicro: number }> {
    const now = this.deps.clock.now()
    // Free has no wallet: what it holds is included, like its other allowances.
    const price = PLANS[developer.plan].wallet ? PRICES[developer.currency].phoneRentMicro : 0
    let written = 0
    let earliest: string | null = null
    const rented = await this.rented(developer)
    // The mark is keyed by the holding (number id and since): a number released and rented again starts anew.
    const markOf = (n: PhoneNumberDoc) => `${n.id}:${n.since}`
    const marks = new Map((await this.deps.marks.find({ id: { $in: rented.map(markOf) } })).map((m) => [m.id, m.months]))
    for (const n of rented) {
      const since = Date.parse(n.since)
      const begun = this.monthsBegun(since, now)
      const markId = markOf(n)
      const recorded = marks.get(markId) ?? 0
      if (recorded >= begun) continue
      for (let k = recorded; k < begun; k++) {
        const { fresh } = await this.deps.ledger.record({
          id: `use_rent_${n.id}_${n.since}_${k}`,
          workspaceId: n.workspaceId,
          developerId: developer.id,
          kind: 'phone_rent',
          quantity: 1,
          unitPriceMicro: price,
          costMicro: price,
          currency: developer.currency,
          plan: developer.plan,
          number: n.number,
          createdAt: iso(addMonths(since, k)),
        })
        if (fresh) {
          written++
          const at = iso(addMonths(since, k))
          if (earliest === null || at < earliest) earliest = at
        }
      }
      // After the records: a crash in between re-records months that the ids then store once.
      await this.deps.marks.upsert({ id: markId, months: begun })
    }
    return { written, earliest, heldMicro: this.held(rented, developer, now) }
  }

  /** Next month's rent of every rented number renewing within RENT_HOLD_DAYS. */
  async heldMicro(developer: WorkspaceDoc): Promise<number> {
    return this.held(await this.rented(developer), developer, this.deps.clock.now())
  }

  private held(rented: PhoneNumberDoc[], developer: WorkspaceDoc, now: number): number {
    const price = PRICES[developer.currency].phoneRentMicro
    let held = 0
    for (const n of rented) {
      const since = Date.parse(n.since)
      const renews = addMonths(since, this.monthsBegun(since, now))
      if (renews - now <= RENT_HOLD_DAYS * DAY_MS) held += price
    }
    return held
  }
}
