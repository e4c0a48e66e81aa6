/**
 * Agent versions (docs/spec.md "Agent versions (legacy)", Versioning rules 2–5): the rules behind the
 * legacy routes. Moves of the publication (publish, unpublish, checkpoint, rollback) go through the
 * agent's publication actor; reads come from the version store; promotion and diffs are
 * version-store matters.
 */

import { isResting, publicationStatus } from '../../../machines/agent-publication'
import { iso } from '../../clock'
import type { Logger } from '../../logger'
import { clashes, invalid, notThere } from '../../refusals'
import type { AgentDoc } from '../agents/public'
import type { AgentReader, DraftReader } from './drafts'
import type { Publication } from './publication'
import { ENVIRONMENTS, type Environment, type VersionDoc, type VersionStore } from './repository'
import { changedPanels, diffSnapshots, PANELS, type Panel } from './snapshot'

export interface VersionServiceDeps {
  /** Reads an agent by any name the legacy surface takes: its integer number or its `ag_` id. */
  agents: AgentReader
  /** The agent's integer id on the legacy surface (answers name agents by it). */
  agentNumber: (agent: AgentDoc) => Promise<number>
  drafts: DraftReader
  versions: VersionStore
  publication: Publication
  logger: Logger
}

export interface PublicationStatus {
  agentNumber: number
  status: 'draft' | 'published'
  publishedVersionId: number | null
  lastPublishedAt: string | null
  hasUnpublishedChanges: boolean
  changedFields: Panel[]
}

export type Changes = Record<string, { old: unknown; new: unknown }>

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x))

/**
 * A check another feature makes before a publish (the simulations feature's required suite): it
 * throws the refusal (409) or resolves. `draftHash` is the draft's fingerprint (draftFingerprint).
 */
export type PublishGate = (agent: AgentDoc, draftHash: string) => Promise<void>

export class VersionService {
  private readonly gates: PublishGate[] = []

  constructor(private readonly deps: VersionServiceDeps) {}

  /** Adds a check every publish passes first. */
  gatePublish(gate: PublishGate): void {
    this.gates.push(gate)
  }

  /** A fingerprint of the draft as it is now (its snapshot, knowledge ids included): equal while nothing in it changes. */
  async draftFingerprint(agent: AgentDoc): Promise<string> {
    const snapshot = await this.deps.drafts.snapshotOf(agent)
    return new Bun.CryptoHasher('sha256').update(JSON.stringify(snapshot)).digest('hex')
  }

  /** Freezes the draft as the next version and serves it. */
  async publish(workspaceId: string, agentId: string, by: string, changeSummary: string | null): Promise<VersionDoc> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    if (this.gates.length) {
      const hash = await this.draftFingerprint(agent)
      for (const gate of this.gates) await gate(agent, hash)
    }
    const { versionId } = await this.deps.publication.command(agent, by, { type: 'agent.publish', changeSummary })
    return this.version(workspaceId, agent.id, versionId)
  }

  /** Stops serving; 409 naming `draft` when nothing is published. */
  async unpublish(workspaceId: string, agentId: string, by: string): Promise<{ agentNumber: number }> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    await this.deps.publication.command(agent, by, { type: 'agent.unpublish' })
    return { agentNumber: await this.deps.agentNumber(agent) }
  }

  /**
   * The publication status. `changed_fields` is computed from snapshots (the draft as it is now
   * against the published version), so it also sees changes that do not go through an agent
   * PATCH (knowledge documents); when the chart's own record disagrees, it is brought in step.
   */
  async status(workspaceId: string, agentId: string): Promise<PublicationStatus> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    const view = await this.deps.publication.view(agent)
    const chart = publicationStatus(view.state, view.context)
    const lastPublishedAt = chart.lastPublishedAt === null ? null : iso(chart.lastPublishedAt)
    const published = chart.status === 'published' ? await this.publishedVersion(agent, chart.publishedVersionId) : null
    // Nothing is published yet: every panel of the draft is unpublished, so publishing would
    // change them all (a client showing "publish" on has_unpublished_changes shows it for drafts).
    const agentNumber = await this.deps.agentNumber(agent)
    if (!published) return { agentNumber, status: 'draft', publishedVersionId: null, lastPublishedAt, hasUnpublishedChanges: true, changedFields: [...PANELS] }
    const panels = changedPanels(published.snapshot, await this.deps.drafts.snapshotOf(agent))
    if (isResting(view.state) && !sameSet(panels, view.context.changedFields)) await this.tellChart(agent, panels)
    return { agentNumber, status: 'published', publishedVersionId: published.number, lastPublishedAt, hasUnpublishedChanges: panels.length > 0, changedFields: panels }
  }

  /** Newest first. */
  async list(workspaceId: string, agentId: string): Promise<VersionDoc[]> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    return this.deps.versions.list(agent.id)
  }

  async get(workspaceId: string, agentId: string, number: number): Promise<VersionDoc> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    return this.version(workspaceId, agent.id, number)
  }

  /** Stores the draft as a version without publishing; the publication state does not change. */
  async checkpoint(workspaceId: string, agentId: string, by: string, input: { label: string | null; environment: Environment; changeSummary: string | null }): Promise<VersionDoc> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    const { versionId } = await this.deps.publication.command(agent, by, { type: 'agent.checkpoint', ...input })
    return this.version(workspaceId, agent.id, versionId)
  }

  /** Backs up the agent, restores version `number` onto it, publishes the result. */
  async rollback(workspaceId: string, agentId: string, by: string, number: number): Promise<{ target: VersionDoc; backup: number; published: number; agentNumber: number }> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    const target = await this.version(workspaceId, agent.id, number)
    const { backupVersionId, versionId } = await this.deps.publication.command(agent, by, { type: 'agent.rollback', toVersionId: target.number })
    return { target, backup: backupVersionId, published: versionId, agentNumber: await this.deps.agentNumber(agent) }
  }

  /** Moves a version one environment on: development → staging → production, nothing else. */
  async promote(workspaceId: string, agentId: string, number: number, bodyVersionId: number | undefined, to: Environment): Promise<VersionDoc> {
    if (bodyVersionId !== undefined && bodyVersionId !== number) throw invalid('version_id', `must be the version in the path (${number}); got ${bodyVersionId}`)
    const agent = await this.deps.agents.get(workspaceId, agentId)
    const doc = await this.version(workspaceId, agent.id, number)
    const next = ENVIRONMENTS[ENVIRONMENTS.indexOf(doc.environment) + 1]
    if (to !== next) {
      const order = ENVIRONMENTS.join(' → ')
      const why = next ? `it can be promoted to ${next} only` : 'it cannot be promoted further'
      throw clashes(`version ${doc.number} (${doc.label}) is in ${doc.environment}; promotion runs ${order} one step at a time, so ${why}`, {
        state: doc.environment,
      })
    }
    const updated = await this.deps.versions.setEnvironment(doc.agentId, doc.number, to)
    if (!updated) throw notThere(`no version ${number} of agent ${agentId}`)
    return updated
  }

  /** Field by field, from version `a` (old) to version `b` (new). */
  async diff(workspaceId: string, agentId: string, a: number, b: number): Promise<{ a: VersionDoc; b: VersionDoc; changes: Changes }> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    const [left, right] = [await this.version(workspaceId, agent.id, a), await this.version(workspaceId, agent.id, b)]
    return { a: left, b: right, changes: diffSnapshots(left.snapshot, right.snapshot) }
  }

  /** From the published version (old) to the draft as it is now (new); 409 when nothing is published. */
  async diffDraft(workspaceId: string, agentId: string): Promise<{ published: VersionDoc; changes: Changes; changedFields: Panel[] }> {
    const agent = await this.deps.agents.get(workspaceId, agentId)
    const view = await this.deps.publication.view(agent)
    const chart = publicationStatus(view.state, view.context)
    const published = chart.status === 'published' ? await this.publishedVersion(agent, chart.publishedVersionId) : null
    if (!published) throw clashes(`agent ${agent.id} is draft only (state: draft); there is no published version to compare the draft with`, { state: 'draft' })
    const draft = await this.deps.drafts.snapshotOf(agent)
    return { published, changes: diffSnapshots(published.snapshot, draft), changedFields: changedPanels(published.snapshot, draft) }
  }

  /**
   * Agent PATCH hook: a published agent's chart learns which panels now differ from the published
   * version (docs/spec.md: edits make "published with unpublished changes").
   */
  async agentPatched(agent: AgentDoc): Promise<void> {
    const view = await this.deps.publication.view(agent)
    // Draft only: nothing to differ from. An effect in flight: the next status read catches up.
    if (!isResting(view.state) || view.state === 'draft') return
    const published = await this.publishedVersion(agent, view.context.publishedVersionId)
    if (published) await this.deps.publication.edited(agent, changedPanels(published.snapshot, await this.deps.drafts.snapshotOf(agent)))
  }

  /** Agent delete cascade. */
  async removeAllForAgent(agent: AgentDoc): Promise<void> {
    await this.deps.versions.removeAllForAgent(agent.id)
  }

  private async version(workspaceId: string, agentId: string, number: number): Promise<VersionDoc> {
    const doc = await this.deps.versions.get(workspaceId, agentId, number)
    if (!doc) throw notThere(`no version ${number} of agent ${agentId}`)
    return doc
  }

  private async publishedVersion(agent: AgentDoc, number: number | null): Promise<VersionDoc | null> {
    return number === null ? null : this.deps.versions.get(agent.workspaceId, agent.id, number)
  }

  /** Keeps the chart in step; a failure here must not fail the read that noticed. */
  private async tellChart(agent: AgentDoc, panels: Panel[]): Promise<void> {
    try {
      await this.deps.publication.edited(agent, panels)
    } catch (err) {
      this.deps.logger.warn({ err, agent: agent.id }, 'could not bring the publication chart in step with the draft')
    }
  }
}
