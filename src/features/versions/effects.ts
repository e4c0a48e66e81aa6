/**
 * The publication chart's effects (machines/agent-publication.ts), as plain async functions over
 * the version store and the agent; actor.ts binds them to the chart.
 *
 * Every effect is idempotent, because the runtime re-runs an effect that was in flight when the
 * process died: a version is written once under its number (a re-run keeps the first capture),
 * restoring writes the same fields again, going live and stopping converge on the same flags.
 * Instants come from the command (`pending.at`), never from a clock, so a re-run writes the same.
 */

import type { EffectInput, PendingCommand } from '../../../machines/agent-publication'
import { iso } from '../../clock'
import type { AgentDoc } from '../agents/public'
import type { DraftReader } from './drafts'
import { ENVIRONMENTS, type Environment, type VersionDoc, type VersionStore, versionKey } from './repository'
import { agentFieldsOf } from './snapshot'

/** Writes a version's fields back onto the agent (AgentService.restore fits). */
export type AgentRestorer = (workspaceId: string, agentId: string, fields: Partial<AgentDoc>, at: string) => Promise<void>

export const defaultLabel = (number: number) => `v${number}`

/** A published version is what users are served, so it is production; a backup is for developers. */
const PUBLISHED_ENVIRONMENT: Environment = 'production'
const BACKUP_ENVIRONMENT: Environment = 'development'

const need = (n: number | null, what: string): number => {
  if (n === null) throw new Error(`the command carries no ${what}`)
  return n
}

export class PublicationEffects {
  constructor(
    private readonly versions: VersionStore,
    private readonly drafts: DraftReader,
    private readonly restoreAgent: AgentRestorer,
  ) {}

  /** Publish, and a rollback's automatic publish: the draft as it is now becomes version `versionId`. */
  freezeVersion = async ({ agentId, workspaceId, pending }: EffectInput): Promise<void> => {
    const summary = pending.command === 'rollback' ? `Rollback to ${defaultLabel(need(pending.toVersionId, 'target'))}` : pending.changeSummary
    await this.freeze(agentId, workspaceId, pending, need(pending.versionId, 'version number'), {
      kind: 'publish',
      environment: PUBLISHED_ENVIRONMENT,
      changeSummary: summary,
    })
  }

  /** Rollback, step 1: the agent as it is before the restore. */
  backupCurrent = async ({ agentId, workspaceId, pending }: EffectInput): Promise<void> => {
    await this.freeze(agentId, workspaceId, pending, need(pending.backupVersionId, 'backup number'), {
      kind: 'backup',
      environment: BACKUP_ENVIRONMENT,
      changeSummary: `Backup before rollback to ${defaultLabel(need(pending.toVersionId, 'target'))}`,
    })
  }

  /** Rollback, step 2: the target's snapshot onto the agent (knowledge documents stay as they are). */
  restoreVersion = async ({ agentId, workspaceId, pending }: EffectInput): Promise<void> => {
    const target = await this.versions.get(workspaceId, agentId, need(pending.toVersionId, 'target'))
    if (!target) throw new Error(`version ${versionKey(agentId, pending.toVersionId ?? 0)} does not exist`)
    await this.restoreAgent(workspaceId, agentId, agentFieldsOf(target.snapshot), iso(pending.at))
  }

  storeCheckpoint = async ({ agentId, workspaceId, pending }: EffectInput): Promise<void> => {
    const environment = ENVIRONMENTS.find((e) => e === pending.environment) ?? 'development'
    await this.freeze(agentId, workspaceId, pending, need(pending.versionId, 'version number'), {
      kind: 'checkpoint',
      environment,
      changeSummary: pending.changeSummary,
      label: pending.label,
    })
  }

  goLive = async ({ agentId, pending }: EffectInput): Promise<void> => {
    await this.versions.activate(agentId, need(pending.versionId, 'version number'))
  }

  stopServing = async ({ agentId }: EffectInput): Promise<void> => {
    await this.versions.deactivateAll(agentId)
  }

  private async freeze(
    agentId: string,
    workspaceId: string,
    pending: PendingCommand,
    number: number,
    fields: { kind: VersionDoc['kind']; environment: Environment; changeSummary: string | null; label?: string | null },
  ): Promise<void> {
    // Checked before capturing so a re-run does not even read the (possibly edited since) draft.
    if (await this.versions.get(workspaceId, agentId, number)) return
    const { snapshot } = await this.drafts.capture(workspaceId, agentId)
    await this.versions.insertOnce({
      id: versionKey(agentId, number),
      agentId,
      workspaceId,
      number,
      label: fields.label ?? defaultLabel(number),
      name: snapshot.core.name,
      environment: fields.environment,
      kind: fields.kind,
      isActive: false,
      createdBy: pending.by,
      changeSummary: fields.changeSummary,
      snapshot,
      createdAt: iso(pending.at),
    })
  }
}
