/** Developer workspaces, made and changed in the console (docs/design.md console table). */

import type { PlanId } from '../../catalog/plans'
import { type Clock, iso } from '../../clock'
import { newId } from '../../ids'
import { clashes, notThere } from '../../refusals'
import { checkTimezone } from '../../time-zones'
import { newWorkspaceDoc, type WorkspaceDoc, type WorkspaceRepo } from './repository'

export interface WorkspaceInput {
  name?: string
  plan?: PlanId
  currency?: 'INR' | 'USD'
  timezone?: string
  whiteLabel?: boolean
}

export const presentWorkspace = (w: WorkspaceDoc) => ({
  id: w.id,
  name: w.name,
  plan: w.plan,
  currency: w.currency,
  timezone: w.timezone,
  whiteLabel: w.whiteLabel,
})

export class WorkspaceService {
  constructor(
    private readonly workspaces: WorkspaceRepo,
    private readonly clock: Clock,
  ) {}

  async createDeveloper(input: WorkspaceInput & { name: string }): Promise<WorkspaceDoc> {
    const doc = newWorkspaceDoc(
      {
        id: newId('ws'),
        kind: 'developer',
        parentId: null,
        name: input.name,
        plan: input.plan ?? 'payg',
        currency: input.currency ?? 'USD',
        timezone: checkTimezone(input.timezone ?? 'UTC'),
        whiteLabel: input.whiteLabel ?? false,
      },
      iso(this.clock.now()),
    )
    await this.workspaces.insert(doc)
    return doc
  }

  /** A developer workspace or a customer's `org_` id, as the console's `{ws}` takes. */
  async get(id: string): Promise<WorkspaceDoc> {
    const doc = await this.workspaces.get(id)
    if (!doc) throw notThere(`workspace ${id} not found`)
    return doc
  }

  async patch(id: string, input: WorkspaceInput): Promise<WorkspaceDoc> {
    const doc = await this.get(id)
    const set: Record<string, unknown> = {}
    if (input.name !== undefined) set.name = input.name
    if (input.timezone !== undefined) set.timezone = checkTimezone(input.timezone)
    if (doc.kind === 'developer') {
      if (input.plan !== undefined) set.plan = input.plan
      if (input.currency !== undefined) set.currency = input.currency
      if (input.whiteLabel !== undefined) {
        if (input.whiteLabel && doc.developer) throw clashes('a workspace with customers cannot turn on white label')
        set.whiteLabel = input.whiteLabel
      }
    } else if (input.plan !== undefined || input.currency !== undefined || input.whiteLabel !== undefined) {
      throw clashes('plan, currency and white label belong to the developer workspace, not a customer')
    }
    if (Object.keys(set).length === 0) return doc
    set.updatedAt = iso(this.clock.now())
    return (await this.workspaces.update(id, set))!
  }

  countDevelopers(): Promise<number> {
    return this.workspaces.count({ kind: 'developer' })
  }
}
