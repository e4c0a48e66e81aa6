/**
 * The developer's wallet (docs/spec.md Usage answer `wallet`), derived from the ledger so it can never
 * drift from what was charged:
 *
 * - each UTC month the plan includes `creditMicro`, spent before the topped-up money; what is left
 *   of it expires when the month ends (`creditExpiresAt`);
 * - `balanceMicro` = top-ups − what each month spent beyond that month's credit + this month's
 *   unspent credit (it may go below zero: a call's minutes are charged when it ends);
 * - `heldMicro` = the next month of rent of every rented number renewing within RENT_HOLD_DAYS;
 * - `availableMicro` = balance − held.
 *
 * A month's credit is written down when the month is charged while it runs (`wallet_grants`), so
 * a later plan change does not rewrite past months; the running month always uses the current
 * plan, and so does a past month that was only charged later (late rent).
 */

import { LOW_BALANCE_THRESHOLDS, PLANS } from '../../catalog/plans'
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes } from '../../refusals'
import { type Collection, type CollectionSpec, type DocumentStore, DuplicateKeyError } from '../../store/port'
import type { NotificationService } from '../notifications/public'
import { monthStart, nextMonthStart, type UsageLedger } from './ledger'
import type { RentBook } from './rent'

export interface Wallet {
  balanceMicro: number
  availableMicro: number
  heldMicro: number
  creditMicro: number
  creditExpiresAt: string | null
}

interface TopUpDoc {
  [field: string]: unknown
  id: string
  developerId: string
  amountMicro: number
  createdAt: string
}

interface GrantDoc {
  [field: string]: unknown
  id: string
  developerId: string
  /** `YYYY-MM` */
  month: string
  amountMicro: number
}

/** The closed months' spend beyond credit, kept for the month it was summed in. */
interface ClosedDoc {
  [field: string]: unknown
  /** The developer id. */
  id: string
  /** `YYYY-MM`: the month whose earlier months this sums. */
  month: string
  cashSpent: number
}

/** One row per (developer, threshold, top-up count): the low-balance notice for that crossing was sent (or is not due). */
interface AlertDoc {
  [field: string]: unknown
  id: string
}

const topUpsSpec: CollectionSpec = {
  name: 'wallet_topups',
  indexes: [
    {
      name: 'developer_created',
      fields: [
        ['developerId', 1],
        ['createdAt', -1],
      ],
    },
  ],
}
const grantsSpec: CollectionSpec = {
  name: 'wallet_grants',
  indexes: [
    {
      name: 'developer_month',
      fields: [
        ['developerId', 1],
        ['month', 1],
      ],
    },
  ],
}
const alertsSpec: CollectionSpec = { name: 'wallet_alerts', indexes: [] }
const closedSpec: CollectionSpec = { name: 'wallet_closed', indexes: [] }

const monthOf = (isoDay: string) => isoDay.slice(0, 7)

/**
 * How old a wallet the gates (may this reply or call be paid?) may rest on, on the service clock.
 * Computing one is a handful of store reads (bench:metering); a burst of calls or replies would
 * repeat them for each. A second's staleness lets at most a second of acts past the edge; charges
 * and top-ups on this instance refresh it at once, and reads (GET /usage) never use it.
 */
export const GATE_WALLET_MS = 1_000

export class WalletService {
  private readonly recentWallets = new Map<string, { at: number; wallet: Wallet }>()
  /** Grants this instance wrote (id → amount), so an unchanged one is not written again. */
  private readonly grantsWritten = new Map<string, number>()

  constructor(
    private readonly ledger: UsageLedger,
    private readonly topUps: Collection<TopUpDoc>,
    private readonly grants: Collection<GrantDoc>,
    private readonly alerts: Collection<AlertDoc>,
    private readonly closed: Collection<ClosedDoc>,
    private readonly rent: RentBook,
    private readonly notifications: NotificationService,
    private readonly clock: Clock,
  ) {}

  static async open(store: DocumentStore, deps: { ledger: UsageLedger; rent: RentBook; notifications: NotificationService; clock: Clock }): Promise<WalletService> {
    return new WalletService(
      deps.ledger,
      await store.collection<TopUpDoc>(topUpsSpec),
      await store.collection<GrantDoc>(grantsSpec),
      await store.collection<AlertDoc>(alertsSpec),
      await store.collection<ClosedDoc>(closedSpec),
      deps.rent,
      deps.notifications,
      deps.clock,
    )
  }

  /** The wallet of a developer workspace; null on a plan without one (Free). */
  async of(developer: WorkspaceDoc): Promise<Wallet | null> {
    if (!PLANS[developer.plan].wallet) return null
    return this.compute(developer)
  }

  /** `held`: the money to hold when the caller has just read it (rent settled); read here otherwise. */
  async compute(developer: WorkspaceDoc, held?: number): Promise<Wallet> {
    const now = this.clock.now()
    const since = monthStart(now)
    const current = monthOf(since)
    const credit = PLANS[developer.plan].creditMicro[developer.currency]
    const [before, spentNow, topUps, heldMicro] = await Promise.all([
      this.spentBefore(developer.id, current, credit),
      this.ledger.records.sum('costMicro', { developerId: developer.id, createdAt: { $gte: since } }),
      this.topUps.sum('amountMicro', { developerId: developer.id }),
      held ?? this.rent.heldMicro(developer),
    ])
    const cashSpent = before + Math.max(0, spentNow - credit)
    const creditLeft = Math.max(0, credit - spentNow)
    const balanceMicro = Math.round(topUps - cashSpent + creditLeft)
    return {
      balanceMicro,
      availableMicro: balanceMicro - heldMicro,
      heldMicro,
      creditMicro: creditLeft,
      creditExpiresAt: credit > 0 ? nextMonthStart(now) : null,
    }
  }

  /**
   * What the months before `month` spent beyond their credit. Closed months do not change, so the
   * sum is kept (`wallet_closed`) and computed again only in a new month or after a record was
   * dated into a closed month (forgetClosed): one aggregation over the history a month, not one
   * per charge.
   */
  private async spentBefore(developerId: string, month: string, credit: number): Promise<number> {
    const kept = await this.closed.get(developerId)
    if (kept?.month === month) return kept.cashSpent
    const [days, grants] = await Promise.all([
      this.ledger.records.group({ developerId, costMicro: { $gt: 0 }, createdAt: { $lt: `${month}-01T00:00:00.000Z` } }, { by: { path: 'createdAt', unit: 'day' }, sum: ['costMicro'] }),
      this.grants.find({ developerId }),
    ])
    const spent = new Map<string, number>()
    for (const g of days) if (typeof g.key === 'string') spent.set(monthOf(g.key), (spent.get(monthOf(g.key)) ?? 0) + (g.sums.costMicro ?? 0))
    const grantOf = new Map(grants.map((g) => [g.month, g.amountMicro]))
    let cashSpent = 0
    // A month nothing was charged in while it ran (rent settled later) had no grant written: its
    // credit is taken to be the current plan's, the best record there is of it.
    for (const [m, amount] of spent) cashSpent += Math.max(0, amount - (grantOf.get(m) ?? credit))
    await this.closed.upsert({ id: developerId, month, cashSpent })
    return cashSpent
  }

  /** A record was dated into a closed month (late rent, a call that ended before the 1st): sum them again. */
  async forgetClosed(developerId: string): Promise<void> {
    await this.closed.delete(developerId)
  }

  /** A wallet computed at most GATE_WALLET_MS ago on this instance, for the gates; null when none. */
  recent(developerId: string): Wallet | null {
    const kept = this.recentWallets.get(developerId)
    return kept && this.clock.now() - kept.at < GATE_WALLET_MS ? kept.wallet : null
  }

  remember(developerId: string, wallet: Wallet): Wallet {
    // Bounded by the developers active within the last second; old entries go when touched again.
    this.recentWallets.set(developerId, { at: this.clock.now(), wallet })
    return wallet
  }

  /**
   * Console top-up; answers the wallet after it. 409 for a customer (billed to its developer) and
   * for a plan without a wallet.
   */
  async topUp(developer: WorkspaceDoc, amountMicro: number): Promise<Wallet> {
    if (developer.kind === 'customer') throw clashes(`customer ${developer.id} is billed to its developer ${developer.parentId}; credit the developer's wallet`)
    if (!PLANS[developer.plan].wallet) throw clashes(`the ${developer.plan} plan has no wallet; change the plan first`)
    const count = await this.topUps.count({ developerId: developer.id })
    await this.topUps.insert({ id: newId('top'), developerId: developer.id, amountMicro, createdAt: iso(this.clock.now()) })
    const wallet = this.remember(developer.id, await this.compute(developer))
    // Still below a threshold after the top-up: that is not a new crossing, so no notice for it.
    for (const threshold of LOW_BALANCE_THRESHOLDS[developer.currency]) {
      if (wallet.availableMicro < threshold) await this.claimAlert(developer.id, threshold, count + 1)
    }
    return wallet
  }

  /** Called after a priced act: writes down the month's credit and tells the developer when a threshold was crossed. */
  async afterSpend(developer: WorkspaceDoc, costMicro?: number): Promise<void> {
    const now = this.clock.now()
    const month = monthOf(monthStart(now))
    const amountMicro = PLANS[developer.plan].creditMicro[developer.currency]
    const grantId = `${developer.id}:${month}`
    // Written when it changes, not on every charge: a write per charge contends on a shared store.
    if (this.grantsWritten.get(grantId) !== amountMicro) {
      await this.grants.upsert({ id: grantId, developerId: developer.id, month, amountMicro })
      this.grantsWritten.set(grantId, amountMicro)
    }
    // The wallet a charge leaves: a recent one less the charge when this instance has one (a charge
    // lowers balance and available by its cost, credit first), else computed. Summing the month's
    // ledger on every charge made each call or reply cost more as the month filled (bench:calls).
    // A threshold the cheap figure says was crossed is checked on a computed wallet before any notice.
    const kept = costMicro === undefined ? undefined : this.recentWallets.get(developer.id)
    const estimated = kept !== undefined && now - kept.at < GATE_WALLET_MS
    let wallet: Wallet
    if (estimated) {
      const w = kept.wallet
      wallet = { ...w, balanceMicro: w.balanceMicro - costMicro!, availableMicro: w.availableMicro - costMicro!, creditMicro: Math.max(0, w.creditMicro - costMicro!) }
      // Kept with its own time: it is computed afresh at least every GATE_WALLET_MS.
      this.recentWallets.set(developer.id, { at: kept.at, wallet })
    } else wallet = this.remember(developer.id, await this.compute(developer))
    const below = (w: Wallet) => LOW_BALANCE_THRESHOLDS[developer.currency].filter((t) => w.availableMicro < t)
    let crossed = below(wallet)
    if (crossed.length && estimated) {
      wallet = this.remember(developer.id, await this.compute(developer))
      crossed = below(wallet)
    }
    if (!crossed.length) return
    const count = await this.topUps.count({ developerId: developer.id })
    // Lowest first: one notice names the lowest threshold passed; the higher ones are claimed silently.
    for (const [i, threshold] of crossed.reverse().entries()) {
      if (!(await this.claimAlert(developer.id, threshold, count)) || i > 0) continue
      const units = (n: number) => `${(n / 1_000_000).toFixed(2)} ${developer.currency}`
      await this.notifications.notify({
        workspaceId: developer.id,
        kind: 'low_balance',
        title: threshold === 0 ? 'Your balance has run out' : `Your balance is below ${units(threshold)}`,
        body: `Available balance: ${units(wallet.availableMicro)}. Top up to keep metered replies and calls running.`,
        data: { availableMicro: wallet.availableMicro, thresholdMicro: threshold },
        key: `low_balance:${developer.id}:${threshold}:${count}`,
      })
    }
  }

  /** True the first time (developer, threshold, top-up count) is claimed. */
  private async claimAlert(developerId: string, threshold: number, count: number): Promise<boolean> {
    try {
      await this.alerts.insert({ id: `${developerId}:${threshold}:${count}` })
      return true
    } catch (err) {
      if (err instanceof DuplicateKeyError) return false
      throw err
    }
  }
}
