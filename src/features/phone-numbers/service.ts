/** Phone numbers: added in the console, listed in v1, unassigned when their agent goes. */
import { iso, type Clock } from '../../clock'
import { newId } from '../../ids'
import { badRequest, conflict, notFound } from '../../http/errors'
import { DuplicateKeyError } from '../../store/port'
import { normalizePhone } from '../contacts'
import type { PhoneNumberDoc, PhoneNumberRepo } from './repository'

export interface AddNumber {
  number: string
  label?: string | null
  source: 'rented' | 'brought'
  channel?: 'voice' | 'chatapp'
  agent?: string | null
  carrierCredentials?: boolean
  externalAgents?: boolean
}

export const presentNumber = (d: PhoneNumberDoc) => ({
  number: d.number,
  label: d.label,
  source: d.source,
  agent: d.agentId,
  since: d.since,
})

export class PhoneNumberService {
  constructor(
    private readonly numbers: PhoneNumberRepo,
    /** Whether the agent is one of the workspace's (AgentService.exists). */
    private readonly agentExists: (workspaceId: string, agentId: string) => Promise<boolean>,
    private readonly clock: Clock,
    /** Keeps the agent's copy of its voice number in step (see AgentDoc.phoneNumber). */
    private readonly onVoiceNumber: (agentId: string, number: string | null) => Promise<void>,
  ) {}

  async add(workspaceId: string, input: AddNumber): Promise<PhoneNumberDoc> {
    const number = normalizePhone(input.number)
    if (!number) throw badRequest('number', `"${input.number}" is not a phone number`)
    const agentId = input.agent ?? null
    if (agentId) {
      if (!(await this.agentExists(workspaceId, agentId))) throw notFound(`no agent ${agentId} in this workspace`)
    }
    const now = iso(this.clock.now())
    const doc: PhoneNumberDoc = {
      id: newId('pn'),
      workspaceId,
      number,
      label: input.label ?? null,
      source: input.source,
      channel: input.channel ?? 'voice',
      agentId,
      // A rented number comes with our carrier's credentials (DESIGN.md console table).
      carrierCredentials: input.carrierCredentials ?? input.source === 'rented',
      externalAgents: input.externalAgents ?? false,
      since: now,
      createdAt: now,
    }
    try {
      await this.numbers.insert(doc)
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw conflict(`${number} is already held by a workspace`)
      throw error
    }
    if (agentId && doc.channel === 'voice') await this.onVoiceNumber(agentId, number)
    return doc
  }

  /** Who holds a number (one workspace at a time), or null. */
  byNumber(number: string): Promise<PhoneNumberDoc | null> {
    return this.numbers.findOne({ number })
  }

  /** Numbers a workspace holds (a customer's counts). */
  countIn(workspaceId: string): Promise<number> {
    return this.numbers.count({ workspaceId })
  }

  /** Every number a workspace holds, voice and messaging, oldest first (a customer delete names them). */
  heldBy(workspaceId: string): Promise<PhoneNumberDoc[]> {
    return this.numbers.find({ workspaceId }, { sort: [['createdAt', 1], ['id', 1]] })
  }

  /** Every number held by any of these workspaces (a developer and its customers: rent, in one query). */
  heldByAny(workspaceIds: string[]): Promise<PhoneNumberDoc[]> {
    return this.numbers.find({ workspaceId: { $in: workspaceIds } })
  }

  list(workspaceId: string): Promise<PhoneNumberDoc[]> {
    return this.numbers.find({ workspaceId }, { sort: [['createdAt', -1], ['id', -1]] })
  }

  /** Agent delete cascade: its numbers stay with the workspace, unassigned. */
  async unassignAgent(agentId: string): Promise<void> {
    for (const n of await this.numbers.find({ agentId })) await this.numbers.update(n.id, { agentId: null })
  }
}
