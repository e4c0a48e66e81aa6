/**
 * The campaign sender: runs while a campaign is `sending` (the actor's `sendRecipients`), walking
 * its pending recipients in order. Each recipient is claimed (`sending`, in the row's write lane,
 * only if still `pending` and the run not stopped) before its message or call is handed over, so
 * neither a restart nor a quick pause-and-resume sends to anyone twice; a stop (pause, cancel,
 * failure) takes effect before the next claim, while those already claimed complete.
 * What a recipient is handed depends on the kind: broadcast.ts, calling.ts.
 *
 * When the account cannot pay (the wallet, or Free's monthly messages or minutes), at a (re)start
 * or for a recipient (`Unpaid`), the campaign stops: every recipient not reached is failed with
 * `not sent: <why>`, the campaign fails with that `lastError`, and a warn line says it.
 */

import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { Collection } from '../../store/port'
import type { ContactService } from '../contacts/public'
import type { CampaignReport } from './actor'
import type { CampaignOutcomes } from './outcomes'
import type { CampaignDoc, RecipientDoc } from './repository'

/** Recipients read per query: a few hundred keeps memory flat for a 100,000-recipient campaign. */
const BATCH = 200
/** Progress goes to the chart (one stored snapshot each) at most this often, and at the end. */
const PROGRESS_EVERY_MS = 250
/** A platform refusing at least FAILURE_SHARE of the last FAILURE_WINDOW sends fails the campaign (docs/api/campaigns.md). */
const FAILURE_WINDOW = 50
const FAILURE_SHARE = 0.8
/** How long a consent withdrawal is remembered here (consentWithdrawn). */
const WITHDRAWN_KEEP_MS = 24 * 60 * 60 * 1000

/** The account cannot pay for this send (the recipient's row says so already) nor, so, the rest. */
export class Unpaid {
  constructor(readonly reason: string) {}
}

export interface Contact {
  name: string | null
  email: string | null
  phone: string
}

/** How one kind of campaign hands a claimed recipient over. */
export interface Target {
  /** Recipients handed over at once by this campaign. */
  window: number
  /** Waits for the pace (and, for calls, a line) before the next claim; resolves with what gives back what it took. */
  pace(): Promise<() => void>
  /**
   * Hands the recipient over and records the outcome on its row: `handed` (sent or placed),
   * `refused` (the platform or network refused it: counts toward the failure share), `skipped`
   * (not for this recipient, e.g. withdrawn consent), `retry` (the row is pending again), or
   * `Unpaid` (refused for money: the campaign stops).
   * Resolves when the recipient no longer holds anything (a call: when it ended).
   */
  hand(row: RecipientDoc, contact: Contact, release: () => void): Promise<'handed' | 'refused' | 'skipped' | 'retry' | Unpaid>
  /** Resolves once what earlier runs handed over has ended too (a call placed before a crash). */
  settled?(): Promise<void>
}

export interface SenderDeps {
  campaigns: Collection<CampaignDoc>
  recipients: Collection<RecipientDoc>
  contacts: ContactService
  outcomes: CampaignOutcomes
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  /** The campaign's target, or why it cannot send at all (the campaign fails with it; `Unpaid`: for money). */
  target: (campaign: CampaignDoc, workspace: WorkspaceDoc) => Promise<Target | string | Unpaid>
  logger: Logger
}

class Stop {
  stopped = false
}

export class CampaignSender {
  /** Recipients claimed by this process and not finished, per campaign: not crash leftovers. */
  private readonly inFlight = new Map<string, Map<string, Promise<unknown>>>()
  private readonly running = new Set<Promise<void>>()
  private readonly stops = new Set<Stop>()
  /**
   * Rows claimed by this process, per campaign: a second run (a quick pause and resume) may have read
   * a row as pending just before the first run claimed it. Only this process sends a campaign (its
   * actor's lease), and a restarted process reads claims from the rows themselves.
   */
  private readonly claimed = new Map<string, Set<string>>()
  /** Consent withdrawn while this process runs (workspace:phone → when and why): overrides contacts read before it. */
  private readonly withdrawn = new Map<string, { at: number; reason: 'opted_out' | 'do_not_call' }>()
  /** Stopped for shutdown: a campaign resumed here meanwhile (an event reached it) waits for the next instance. */
  private halted = false
  /** Runs per campaign not yet ended (a stopped one finishes its hand-overs): its claimed set lives while any does. */
  private readonly active = new Map<string, number>()

  constructor(private readonly d: SenderDeps) {}

  start(id: string, report: CampaignReport): () => void {
    if (this.halted) return () => {}
    const stop = new Stop()
    this.stops.add(stop)
    this.active.set(id, (this.active.get(id) ?? 0) + 1)
    const run: Promise<void> = this.run(id, stop, report)
      .catch((err) => {
        this.d.logger.warn({ err, campaign: id }, 'campaign sender failed')
        if (!stop.stopped) report.failed(`sending stopped on an internal error: ${(err as Error).message}`)
      })
      .finally(() => {
        this.running.delete(run)
        this.stops.delete(stop)
        const left = (this.active.get(id) ?? 1) - 1
        if (left) return void this.active.set(id, left)
        // Nothing of the campaign runs here any more: every claim is in its row.
        this.active.delete(id)
        this.claimed.delete(id)
        if (!this.inFlight.get(id)?.size) this.inFlight.delete(id)
      })
    this.running.add(run)
    return () => {
      stop.stopped = true
    }
  }

  /** A contact opted out or was put on the do-not-call list (the contacts feature's listener). */
  consentWithdrawn(workspaceId: string, phone: string, reason: 'opted_out' | 'do_not_call'): void {
    const now = performance.now()
    this.withdrawn.set(`${workspaceId}:${phone}`, { at: now, reason })
    // Older than any batch of contacts still being sent to (a day: a slow calling campaign's batch takes under an hour).
    for (const [key, w] of this.withdrawn) if (now - w.at > WITHDRAWN_KEEP_MS) this.withdrawn.delete(key)
  }

  /** Resolves once every run has ended (tests). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running])
  }

  /**
   * Shutdown: every run stops before its next recipient (the campaigns stay `sending` and resume
   * at the next boot); messages in flight get up to `graceMs` to be recorded, calls are not waited for.
   */
  async stopAll(graceMs: number): Promise<void> {
    this.halted = true
    for (const stop of this.stops) stop.stopped = true
    const flights = [...this.inFlight.values()].flatMap((m) => [...m.values()])
    await Promise.race([Promise.allSettled([...this.running, ...flights]), Bun.sleep(graceMs)])
  }

  private flights(id: string): Map<string, Promise<unknown>> {
    let m = this.inFlight.get(id)
    if (!m) {
      m = new Map()
      this.inFlight.set(id, m)
    }
    return m
  }

  private async run(id: string, stop: Stop, report: CampaignReport): Promise<void> {
    const d = this.d
    const campaign = await d.campaigns.get(id)
    const workspace = campaign ? await d.workspace(campaign.workspaceId) : null
    if (!campaign || !workspace) return report.failed('the campaign or its workspace is gone')
    const flights = this.flights(id)
    // Rows a crash left `sending` were maybe handed over: failed, never sent again (docs/api/campaigns.md).
    for (const r of await d.recipients.find({ campaignId: id, status: 'sending' })) {
      if (!flights.has(r.id))
        await d.outcomes.write(r.id, () =>
          d.recipients.update(r.id, { status: 'failed', error: 'interrupted: the service stopped while this recipient was being sent to; not sent again, so nobody gets it twice' }),
        )
    }
    const target = await d.target(campaign, workspace)
    if (target instanceof Unpaid) return this.unpaid(campaign, target.reason, stop, report)
    if (typeof target === 'string') return report.failed(target)
    const countHandled = () => d.recipients.count({ campaignId: id, status: { $nin: ['pending', 'sending'] } })
    let handled = await countHandled()
    let lastReport = 0
    const tell = () => {
      if (stop.stopped) return
      const now = Date.now()
      if (now - lastReport >= PROGRESS_EVERY_MS) {
        lastReport = now
        // Below the total: only the last report, once nothing is in flight (an earlier run's calls
        // included), can make the campaign sent.
        report.progress(Math.min(handled, campaign.recipients - 1))
      }
    }
    const refusals: boolean[] = []
    let failure: string | null = null
    let unpaid = false
    let mine = this.claimed.get(id)
    if (!mine) {
      mine = new Set()
      this.claimed.set(id, mine)
    }
    const claimed = mine
    const claim = (r: RecipientDoc, status: 'sending' | 'skipped', error?: string) =>
      d.outcomes.write(r.id, async () => {
        if (stop.stopped || failure || claimed.has(r.id)) return false
        claimed.add(r.id)
        await d.recipients.update(r.id, error ? { status, error } : { status })
        return true
      })
    // Pending rows in index order, read a batch at a time past the last one read (rows read and not
    // yet claimed are still pending); one read at a time however many workers ask.
    // Their contacts are read with them, in one query per batch; a withdrawal after that read is
    // known from the contacts feature's listener (consentWithdrawn).
    const queue: { row: RecipientDoc; contact: (Contact & { optedOut: boolean; doNotCall: boolean }) | null; at: number }[] = []
    let lastIndex = -1
    let exhausted = false
    let reading: Promise<void> | null = null
    const read = async () => {
      const rows = await d.recipients.find({ campaignId: id, status: 'pending', index: { $gt: lastIndex } }, { sort: [['index', 1]], limit: BATCH })
      const at = performance.now()
      const found = new Map(
        (
          await d.contacts.findByPhones(
            workspace.id,
            rows.map((r) => r.phone),
          )
        ).map((c) => [c.phone, c]),
      )
      for (const row of rows) queue.push({ row, contact: found.get(row.phone) ?? null, at })
      if (rows.length) lastIndex = rows[rows.length - 1]!.index
      exhausted = rows.length < BATCH
    }
    const next = async () => {
      while (!queue.length && !exhausted) {
        reading ??= read().finally(() => (reading = null))
        await reading
      }
      return queue.shift() ?? null
    }
    const skipReason = (item: NonNullable<Awaited<ReturnType<typeof next>>>): string | null => {
      const { contact } = item
      if (!contact) return 'not a contact of this workspace'
      const later = this.withdrawn.get(`${workspace.id}:${item.row.phone}`)
      const withdrawn = later && later.at >= item.at ? later.reason : null
      if (contact.optedOut || withdrawn === 'opted_out') return 'opted out'
      if (campaign.kind === 'voice' && (contact.doNotCall || withdrawn === 'do_not_call')) return 'on the do-not-call list'
      return null
    }
    // `window` workers, each taking the next recipient: the store work of one overlaps the others'
    // (and shares their commits), while a stop is seen before every claim.
    const worker = async () => {
      for (;;) {
        if (stop.stopped || failure) return
        const item = await next()
        if (!item) return
        const { row: r, contact } = item
        const why = skipReason(item)
        if (why || !contact) {
          if (await claim(r, 'skipped', why ?? undefined)) handled++
          tell()
          continue
        }
        const release = await target.pace()
        if (!(await claim(r, 'sending'))) {
          release()
          continue
        }
        const one = target.hand(r, contact, release)
        flights.set(r.id, one)
        try {
          const result = await one
          // Put back as pending by the target: claimable again.
          if (result === 'retry') {
            claimed.delete(r.id)
            continue
          }
          if (result instanceof Unpaid) {
            // No claim after this one: the rest are failed for the same reason below.
            handled++
            if (!unpaid) [failure, unpaid] = [result.reason, true]
            continue
          }
          if (result !== 'skipped') refusals.push(result === 'refused')
          if (refusals.length > FAILURE_WINDOW) refusals.shift()
          handled++
          tell()
          const refused = refusals.filter(Boolean).length
          if (!failure && result === 'refused' && refusals.length >= FAILURE_WINDOW && refused >= FAILURE_SHARE * FAILURE_WINDOW) {
            const last = await d.recipients.get(r.id)
            failure = `the platform refused ${refused} of the last ${FAILURE_WINDOW} sends${last?.error ? ` (last: ${last.error})` : ''}; the rest were not sent`
          }
        } catch (err) {
          d.logger.warn({ err, campaign: id, recipient: r.id }, 'campaign recipient not handed over')
        } finally {
          flights.delete(r.id)
        }
      }
    }
    await Promise.all(Array.from({ length: target.window }, worker))
    if (failure && unpaid) return this.unpaid(campaign, failure, stop, report)
    if (failure && !stop.stopped) return report.failed(failure)
    if (stop.stopped) return
    // Everything this process still has in flight for the campaign (an earlier run's too, after a
    // quick pause and resume) completes before the campaign can be called sent.
    while (flights.size) await Promise.allSettled([...flights.values()])
    if (stop.stopped) return
    // A call put back (every campaign line busy) may have come back after the last batch was read.
    if (await d.recipients.count({ campaignId: id, status: 'pending' })) return this.run(id, stop, report)
    await target.settled?.()
    if (stop.stopped) return
    report.progress(await countHandled())
  }

  /**
   * The account cannot pay: every recipient still pending is failed with the reason, then the
   * campaign. A pause or cancel meanwhile leaves them pending (a resume checks the money again).
   */
  private async unpaid(campaign: CampaignDoc, reason: string, stop: Stop, report: CampaignReport): Promise<void> {
    const d = this.d
    d.logger.warn({ campaign: campaign.id, workspace: campaign.workspaceId, reason }, 'campaign stopped: the account cannot pay')
    for (;;) {
      if (stop.stopped) return
      const rows = await d.recipients.find({ campaignId: campaign.id, status: 'pending' }, { sort: [['index', 1]], limit: BATCH })
      if (!rows.length) break
      await Promise.all(
        rows.map((r) =>
          d.outcomes.write(r.id, async () => {
            if ((await d.recipients.get(r.id))?.status === 'pending') await d.recipients.update(r.id, { status: 'failed', error: `not sent: ${reason}` })
          }),
        ),
      )
    }
    // Failed, not `sent`: no progress report here (every row handled would make it sent); the counts come from the rows.
    if (!stop.stopped) report.failed(reason)
  }
}
