/**
 * Customers of a developer workspace (docs/spec.md Customer, Customers endpoints, Authentication
 * rules 4–6). A customer is a workspace whose parent is the developer that pays for it.
 */

import { PLANS } from '../../catalog/plans'
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import { checkInstant } from '../../instant'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import { clashes, invalid, notBlank, notCovered, notThere } from '../../refusals'
import { DuplicateKeyError, type Filter, type PageAfter } from '../../store/port'
import { checkTimezone } from '../../time-zones'
import type { Meter } from '../usage/public'
import { newWorkspaceDoc, type WorkspaceRepo } from '../workspaces/public'
import type { CreateCustomer, Customer, CustomerDetail, ListCustomersQuery, PatchCustomer } from './model'
import { checkMetadata } from './rules'

/** What the single-customer read counts, asked of the features that own each (their index.ts exports). */
export interface CustomerCounters {
  agents: (workspaceId: string) => Promise<number>
  phoneNumbers: (workspaceId: string) => Promise<number>
  contacts: (workspaceId: string) => Promise<number>
}

export function presentCustomer(doc: WorkspaceDoc): Customer {
  return {
    id: doc.id,
    name: doc.name,
    externalId: doc.externalId,
    metadata: doc.metadata,
    timezone: doc.timezone,
    allottedCallLines: doc.allottedCallLines,
    archivedAt: doc.archivedAt,
    eraseAfter: doc.eraseAfter,
    createdAt: doc.createdAt,
  }
}

export class CustomerService {
  constructor(
    private readonly workspaces: WorkspaceRepo,
    private readonly counters: CustomerCounters,
    private readonly meter: Pick<Meter, 'spendThisMonth'>,
    private readonly clock: Clock,
  ) {}

  async create(developer: WorkspaceDoc, input: CreateCustomer): Promise<WorkspaceDoc> {
    if (developer.whiteLabel) {
      throw clashes('this workspace resells the console under its own brand (white label) and cannot have customers')
    }
    notBlank(input.name, 'name')
    const metadata = input.metadata ?? {}
    checkMetadata(metadata)
    const timezone = checkTimezone(input.timezone ?? 'UTC')
    const limit = PLANS[developer.plan].customers
    // Deleted customers count until erased (docs/spec.md Limits), and erased ones are removed.
    const held = await this.workspaces.count({ parentId: developer.id })
    if (held >= limit) {
      throw notCovered(`the ${developer.plan} plan allows ${limit} customers and this workspace has ${held} (deleted ones count until erased); upgrade to add more`)
    }
    const externalId = input.externalId ?? null
    if (externalId !== null) await this.assertExternalIdFree(developer.id, externalId)
    const now = iso(this.clock.now())
    const doc = newWorkspaceDoc(
      {
        id: newId('org'),
        kind: 'customer',
        parentId: developer.id,
        name: input.name,
        plan: developer.plan,
        currency: developer.currency,
        timezone,
        whiteLabel: false,
        externalId,
        metadata,
      },
      now,
    )
    await this.insertOrConflict(doc)
    // The first customer makes the workspace a developer workspace (Authentication rule 6).
    if (!developer.developer) await this.workspaces.update(developer.id, { developer: true, updatedAt: now })
    return doc
  }

  async list(developer: WorkspaceDoc, query: ListCustomersQuery, limit: number, after: PageAfter | null): Promise<WorkspaceDoc[]> {
    const filter: Filter = { parentId: developer.id, status: query.archived ? 'deleted' : 'active' }
    if (query.externalId !== undefined) filter.externalId = query.externalId
    const range: Record<string, string> = {}
    if (query.createdAfter !== undefined) range.$gte = checkInstant(query.createdAfter, 'createdAfter')
    if (query.createdBefore !== undefined) range.$lt = checkInstant(query.createdBefore, 'createdBefore')
    if (Object.keys(range).length) filter.createdAt = range
    return this.workspaces.page(filter, limit, after)
  }

  /** A customer of this developer, deleted or not; 404 for anyone else's. */
  async get(developer: WorkspaceDoc, id: string): Promise<WorkspaceDoc> {
    const doc = await this.workspaces.get(id)
    if (!doc || doc.parentId !== developer.id) throw notThere(`no customer ${id} in this workspace`)
    return doc
  }

  /** The customer a new key is issued for: only an active one (a deleted customer's keys stay dead until restored). */
  async activeForKeys(developer: WorkspaceDoc, id: string): Promise<WorkspaceDoc> {
    const customer = await this.get(developer, id)
    if (customer.status !== 'active') throw clashes(`customer ${customer.id} is deleted; restore it first`, { state: customer.status })
    return customer
  }

  async detail(developer: WorkspaceDoc, id: string): Promise<CustomerDetail> {
    const doc = await this.get(developer, id)
    const [agents, phoneNumbers, contacts, spend] = await Promise.all([this.counters.agents(id), this.counters.phoneNumbers(id), this.counters.contacts(id), this.meter.spendThisMonth(doc)])
    return { ...presentCustomer(doc), counts: { agents, phoneNumbers, contacts }, spendThisMonthMicro: Math.round(spend) }
  }

  async patch(developer: WorkspaceDoc, id: string, input: PatchCustomer): Promise<WorkspaceDoc> {
    const doc = await this.get(developer, id)
    if (doc.status !== 'active') throw clashes(`customer ${id} is deleted; restore it before changing it`, { state: doc.status })
    const set: Record<string, unknown> = {}
    if (input.name !== undefined) set.name = notBlank(input.name, 'name')
    if (input.timezone !== undefined) set.timezone = checkTimezone(input.timezone)
    if (input.allottedCallLines !== undefined) set.allottedCallLines = input.allottedCallLines
    if (input.externalId !== undefined && input.externalId !== doc.externalId) {
      if (input.externalId !== null) await this.assertExternalIdFree(developer.id, input.externalId)
      set.externalId = input.externalId
    }
    if (input.metadata !== undefined) {
      if (Object.keys(input.metadata).includes('__proto__')) throw invalid('metadata', 'key "__proto__" is not allowed')
      const merged = { ...doc.metadata }
      for (const [key, value] of Object.entries(input.metadata)) {
        if (value === null) delete merged[key]
        else merged[key] = value
      }
      checkMetadata(merged)
      set.metadata = merged
    }
    if (Object.keys(set).length === 0) return doc
    set.updatedAt = iso(this.clock.now())
    try {
      return (await this.workspaces.update(id, set))!
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw clashes(`another customer already has externalId ${input.externalId}`)
      throw error
    }
  }

  private async assertExternalIdFree(developerId: string, externalId: string): Promise<void> {
    const clash = await this.workspaces.findOne({ parentId: developerId, externalId })
    if (clash) throw clashes(`another customer (${clash.id}) already has externalId ${externalId}`, { customer: clash.id })
  }

  private async insertOrConflict(doc: WorkspaceDoc): Promise<void> {
    try {
      await this.workspaces.insert(doc)
    } catch (error) {
      // Two concurrent creates with one externalId: the unique index decides.
      if (error instanceof DuplicateKeyError) throw clashes(`another customer already has externalId ${doc.externalId}`)
      throw error
    }
  }
}
