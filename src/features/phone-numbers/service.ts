/** Phone numbers: added in the console, listed in v1, unassigned when their agent goes. */
import { iso, type Clock } from '../../clock'
import { newId } from '../../ids'
import { badRequest, conflict, notFound } from '../../http/errors'
import { DuplicateKeyError } from '../../store/port'
import { normalizePhone } from '../contacts/phone'
import type { AgentRepo } from '../agents/repository'
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
    private readonly agents: AgentRepo,
    private readonly clock: Clock,
    /** Keeps the agent's copy of its voice number in step (see AgentDoc.phoneNumber). */
    private readonly onVoiceNumber: (agentId: string, number: string | null) => Promise<void>,
  ) {}

  async add(workspaceId: string, input: AddNumber): Promise<PhoneNumberDoc> {
    const number = normalizePhone(input.number)
    if (!number) throw badRequest('number', `"${input.number}" is not a phone number`)
    const agentId = input.agent ?? null
    if (agentId) {
      const agent = await this.agents.get(agentId)
      if (!agent || agent.workspaceId !== workspaceId) throw notFound(`no agent ${agentId} in this workspace`)
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

  list(workspaceId: string): Promise<PhoneNumberDoc[]> {
    return this.numbers.find({ workspaceId }, { sort: [['createdAt', -1], ['id', -1]] })
  }

  /** Agent delete cascade: its numbers stay with the workspace, unassigned. */
  async unassignAgent(agentId: string): Promise<void> {
    for (const n of await this.numbers.find({ agentId })) await this.numbers.update(n.id, { agentId: null })
  }
}
