/**
 * Phone numbers: added, changed and released in the console, listed in v1, unassigned when their
 * agent goes. A released number's record is removed (docs/api/console.md): it is then not held by
 * anyone, so it is not listed, counted, rented or in the way of deleting a customer, and it can be
 * added again as a new holding. What it cost stays in the usage ledger.
 */
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import { clashes, invalid, notThere } from '../../refusals'
import { DuplicateKeyError } from '../../store/port'
import { normalizePhone } from '../contacts/public'
import type { AccountCheck, CarrierAccountFields, CarrierAccounts } from './carrier-accounts'
import type { PhoneNumberDoc, PhoneNumberRepo } from './repository'

export interface AddNumber {
  number: string
  label?: string | null
  source: 'rented' | 'brought'
  channel?: 'voice' | 'chatapp'
  agent?: string | null
  carrierCredentials?: boolean
  /** The number's own carrier account (carrier-accounts.ts): its calls go out on it. */
  carrierAccount?: CarrierAccountFields
  externalAgents?: boolean
}

/** The console's PATCH: each member given changes; `agent: null` detaches the number. */
export interface NumberPatch {
  agent?: string | null
  label?: string | null
  externalAgents?: boolean
  /** Adds (or replaces) the number's own carrier account: it then has carrier credentials. */
  carrierAccount?: CarrierAccountFields
}

/** Runs before a number is released, in the order registered; one that throws stops the release. */
export type BeforeRelease = (number: PhoneNumberDoc) => Promise<void>

export const presentNumber = (d: PhoneNumberDoc) => ({
  number: d.number,
  label: d.label,
  source: d.source,
  agent: d.agentId,
  since: d.since,
})

export class PhoneNumberService {
  private readonly beforeReleaseHooks: BeforeRelease[] = []

  constructor(
    private readonly numbers: PhoneNumberRepo,
    /** Whether the agent is one of the workspace's (AgentService.exists). */
    private readonly agentExists: (workspaceId: string, agentId: string) => Promise<boolean>,
    private readonly clock: Clock,
    /** Keeps the agent's copy of its voice number in step (see AgentDoc.phoneNumber). */
    private readonly onVoiceNumber: (agentId: string, number: string | null) => Promise<void>,
    /** The agent's copy of its voice number (AgentDoc.phoneNumber), or null when it is gone. */
    private readonly voiceNumberOf: (workspaceId: string, agentId: string) => Promise<string | null>,
    private readonly accounts: CarrierAccounts,
  ) {}

  /** A check or a settlement that must happen before a number is released (a live call, rent). */
  beforeRelease(hook: BeforeRelease): void {
    this.beforeReleaseHooks.push(hook)
  }

  async add(workspaceId: string, input: AddNumber): Promise<PhoneNumberDoc> {
    const number = normalizePhone(input.number)
    if (!number) throw invalid('number', `"${input.number}" is not a phone number`)
    const agentId = input.agent ?? null
    if (agentId) {
      if (!(await this.agentExists(workspaceId, agentId))) throw notThere(`no agent ${agentId} in this workspace`)
    }
    if (input.carrierAccount && input.carrierCredentials === false) throw invalid('carrierCredentials', 'cannot be false with a carrierAccount')
    const carrierAccount = input.carrierAccount ? await this.accounts.seal(input.carrierAccount) : null
    const now = iso(this.clock.now())
    const doc: PhoneNumberDoc = {
      id: newId('pn'),
      workspaceId,
      number,
      label: input.label ?? null,
      source: input.source,
      channel: input.channel ?? 'voice',
      agentId,
      // A rented number comes with our carrier's credentials (docs/design.md console table).
      carrierCredentials: carrierAccount ? true : (input.carrierCredentials ?? input.source === 'rented'),
      ...(carrierAccount ? { carrierAccount } : {}),
      externalAgents: input.externalAgents ?? false,
      since: now,
      createdAt: now,
    }
    try {
      await this.numbers.in(workspaceId).insert(doc)
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw clashes(`${number} is already held by a workspace`)
      throw error
    }
    if (agentId && doc.channel === 'voice') await this.onVoiceNumber(agentId, number)
    return doc
  }

  /** A number of the workspace, as the console names it in a path (any spelling the importer reads). */
  async held(workspaceId: string, raw: string): Promise<PhoneNumberDoc> {
    const number = normalizePhone(raw)
    // Held by another workspace is the same 404 as held by none.
    const doc = number ? await this.numbers.in(workspaceId).findOne({ number }) : null
    if (!doc) throw notThere(`no phone number ${raw} in this workspace`)
    return doc
  }

  async update(workspaceId: string, raw: string, patch: NumberPatch): Promise<PhoneNumberDoc> {
    const doc = await this.held(workspaceId, raw)
    const set: Partial<PhoneNumberDoc> = {}
    if (patch.label !== undefined) set.label = patch.label
    if (patch.externalAgents !== undefined) set.externalAgents = patch.externalAgents
    if (patch.carrierAccount !== undefined) Object.assign(set, { carrierAccount: await this.accounts.seal(patch.carrierAccount), carrierCredentials: true })
    if (patch.agent !== undefined) {
      if (patch.agent !== null && !(await this.agentExists(workspaceId, patch.agent))) throw invalid('agent', `no agent ${patch.agent} in this workspace`)
      set.agentId = patch.agent
    }
    const next = Object.keys(set).length ? ((await this.numbers.in(workspaceId).update(doc.id, set)) ?? { ...doc, ...set }) : doc
    if (doc.channel === 'voice' && next.agentId !== doc.agentId) {
      if (doc.agentId) await this.resyncAgent(workspaceId, doc.agentId)
      if (next.agentId) await this.onVoiceNumber(next.agentId, next.number)
    }
    return next
  }

  /** Releases a number: the hooks first (409 while a call on it is live; rent settled), then the record goes. */
  async release(workspaceId: string, raw: string): Promise<void> {
    const doc = await this.held(workspaceId, raw)
    for (const hook of this.beforeReleaseHooks) await hook(doc)
    await this.numbers.in(workspaceId).delete(doc.id)
    if (doc.channel === 'voice' && doc.agentId) await this.resyncAgent(workspaceId, doc.agentId)
  }

  /**
   * An agent lost a voice number: its copy keeps the one it shows when that is still its own,
   * else shows its newest remaining voice number, else none.
   */
  private async resyncAgent(workspaceId: string, agentId: string): Promise<void> {
    const current = await this.voiceNumberOf(workspaceId, agentId)
    const remaining = await this.numbers.in(workspaceId).find(
      { agentId, channel: 'voice' },
      {
        sort: [
          ['createdAt', -1],
          ['id', -1],
        ],
      },
    )
    if (current !== null && remaining.some((n) => n.number === current)) return
    await this.onVoiceNumber(agentId, remaining[0]?.number ?? null)
  }

  /** The number when this workspace holds it; null when none does or another one does. */
  numberIn(workspaceId: string, number: string): Promise<PhoneNumberDoc | null> {
    return this.numbers.in(workspaceId).findOne({ number })
  }

  /** Who holds a number (one workspace at a time), or null: inbound routing, before any workspace is known. */
  byNumber(number: string): Promise<PhoneNumberDoc | null> {
    return this.numbers.acrossWorkspaces.findOne({ number })
  }

  /** The carrier's check of a number's own account before it is kept (carrier-accounts.ts). */
  checkAccountsWith(check: AccountCheck): void {
    this.accounts.checkWith(check)
  }

  /** The number's own carrier account, opened, or null when it has none (or nobody holds it). */
  async carrierAccountOf(number: string): Promise<CarrierAccountFields | null> {
    const doc = await this.byNumber(number)
    return doc?.carrierAccount ? this.accounts.open(doc.carrierAccount) : null
  }

  /** Numbers a workspace holds (a customer's counts). */
  countIn(workspaceId: string): Promise<number> {
    return this.numbers.in(workspaceId).count()
  }

  /** Every number a workspace holds, voice and messaging, oldest first (a customer delete names them). */
  heldBy(workspaceId: string): Promise<PhoneNumberDoc[]> {
    return this.numbers.in(workspaceId).find(
      {},
      {
        sort: [
          ['createdAt', 1],
          ['id', 1],
        ],
      },
    )
  }

  /** Every number held by any of these workspaces (a developer and its customers: rent, in one query). */
  heldByAny(workspaceIds: string[]): Promise<PhoneNumberDoc[]> {
    return this.numbers.acrossWorkspaces.find({ workspaceId: { $in: workspaceIds } })
  }

  list(workspaceId: string): Promise<PhoneNumberDoc[]> {
    return this.numbers.in(workspaceId).find(
      {},
      {
        sort: [
          ['createdAt', -1],
          ['id', -1],
        ],
      },
    )
  }

  /** Agent delete cascade: its numbers stay with the workspace, unassigned. */
  async unassignAgent(workspaceId: string, agentId: string): Promise<void> {
    const numbers = this.numbers.in(workspaceId)
    for (const n of await numbers.find({ agentId })) await numbers.update(n.id, { agentId: null })
  }
}
