/**
 * Agent versions, legacy surface (docs/spec.md "Agent versions (legacy)"): publish, unpublish, status,
 * versions list, checkpoint, read with snapshot, rollback, promote, diffs. `{id}` is the agent's
 * legacy integer id or its v1 id (`ag_…`); answers name it by the integer; version ids are per-agent numbers. Another workspace's agent is the same 404 as none.
 */
import { Elysia } from 'elysia'
import { NoBody } from '../../http/body-types'
import { answers, legacyErrors } from '../../http/docs'
import type { KernelHttp } from '../../kernel/feature'
import {
  AgentParams,
  AgentVersion,
  AgentVersionWithSnapshot,
  CheckpointBody,
  DiffAnswer,
  DiffDraftAnswer,
  DiffParams,
  PromoteBody,
  PublishAnswer,
  PublishBody,
  presentVersion,
  RollbackAnswer,
  StatusAnswer,
  UnpublishAnswer,
  VersionList,
  VersionParams,
  versionRef,
} from './model'
import type { VersionService } from './service'

/** Every legacy route can answer 401, 422 (legacyErrors adds them) and 429 (rate limit). */
const reads = (...codes: number[]) => legacyErrors(404, 429, ...codes)
/** Moves also answer 403 (read keys) and 503 (an effect failed or the agent stayed busy: retry). */
const moves = (...codes: number[]) => legacyErrors(403, 404, 429, 503, ...codes)

export function versionsLegacy(deps: { context: KernelHttp['legacy']; versions: VersionService }) {
  const { versions } = deps
  return new Elysia({ prefix: '/agents', detail: { tags: ['Agent versions'] } })
    .use(deps.context)
    .post(
      '/:id/publish',
      async ({ params, body, workspace, principal }) => {
        const v = await versions.publish(workspace.id, params.id, principal.key.id, body?.change_summary ?? null)
        return { success: true, status: 'published' as const, version_id: v.number, version_number: v.number, version_label: v.label }
      },
      {
        params: AgentParams,
        body: PublishBody,
        detail: {
          responses: answers({ 200: PublishAnswer, ...moves(409) }),
          summary: 'Publish the draft',
          description:
            'Freezes the whole agent as the next version (`v<n>`) and serves it to live chat and voice. 409 when the agent has a suite required to publish and the draft’s latest run of it did not pass (docs/api/simulations.md), naming the run.',
        },
      },
    )
    .post(
      '/:id/unpublish',
      async ({ params, workspace, principal }) => {
        const { agentNumber } = await versions.unpublish(workspace.id, params.id, principal.key.id)
        return { success: true, status: 'draft' as const, agent_id: agentNumber }
      },
      {
        params: AgentParams,
        body: NoBody,
        detail: {
          responses: answers({ 200: UnpublishAnswer, ...moves(409) }),
          summary: 'Stop serving the published version',
          description: '409 (naming the state `draft`) when nothing is published. The versions are kept.',
        },
      },
    )
    .get(
      '/:id/status',
      async ({ params, workspace }) => {
        const s = await versions.status(workspace.id, params.id)
        return {
          agent_id: s.agentNumber,
          status: s.status,
          published_version_id: s.publishedVersionId,
          last_published_at: s.lastPublishedAt,
          has_unpublished_changes: s.hasUnpublishedChanges,
          changed_fields: s.changedFields,
        }
      },
      { params: AgentParams, detail: { responses: answers({ 200: StatusAnswer, ...reads() }), summary: 'Publication status and which panels the draft changed' } },
    )
    .get('/:id/versions', async ({ params, workspace }) => ({ versions: (await versions.list(workspace.id, params.id)).map((d) => presentVersion(d)) }), {
      params: AgentParams,
      detail: { responses: answers({ 200: VersionList, ...reads() }), summary: 'List versions, newest first' },
    })
    .post(
      '/:id/versions',
      async ({ params, body, workspace, principal }) => {
        const doc = await versions.checkpoint(workspace.id, params.id, principal.key.id, {
          label: body.version_label ?? null,
          environment: body.environment ?? 'development',
          changeSummary: body.change_summary ?? null,
        })
        return presentVersion(doc)
      },
      {
        params: AgentParams,
        body: CheckpointBody,
        detail: {
          responses: answers({ 200: AgentVersion, ...moves() }),
          summary: 'Store a checkpoint',
          description: 'Freezes the draft as a version without publishing; the publication status does not change.',
        },
      },
    )
    .get('/:id/versions/:vid', async ({ params, workspace }) => presentVersion(await versions.get(workspace.id, params.id, params.vid), true), {
      params: VersionParams,
      detail: { responses: answers({ 200: AgentVersionWithSnapshot, ...reads() }), summary: 'Read a version with its snapshot' },
    })
    .post(
      '/:id/versions/:vid/rollback',
      async ({ params, workspace, principal }) => {
        const r = await versions.rollback(workspace.id, params.id, principal.key.id, params.vid)
        const message = `Rolled back to ${r.target.label}: the agent as it was is saved as v${r.backup}, and v${r.published} is published`
        return { success: true, message, agent_id: r.agentNumber, backup_version_id: r.backup, version_id: r.published }
      },
      {
        params: VersionParams,
        body: NoBody,
        detail: {
          responses: answers({ 200: RollbackAnswer, ...moves() }),
          summary: 'Roll back to a version',
          description: 'In this order: the agent as it is now is saved as a backup version, the chosen version is restored onto the agent, and the result is published as a new version.',
        },
      },
    )
    .post('/:id/versions/:vid/promote', async ({ params, body, workspace }) => presentVersion(await versions.promote(workspace.id, params.id, params.vid, body.version_id, body.target_environment)), {
      params: VersionParams,
      body: PromoteBody,
      detail: {
        responses: answers({ 200: AgentVersion, ...legacyErrors(400, 403, 404, 409, 429) }),
        summary: 'Promote a version to the next environment',
        description: 'development → staging → production, one step at a time; any other move answers 409 naming the version’s environment.',
      },
    })
    .get(
      '/:id/versions/:vid/diff/:vid_b',
      async ({ params, workspace }) => {
        const d = await versions.diff(workspace.id, params.id, params.vid, params.vid_b)
        return { version_a: versionRef(d.a), version_b: versionRef(d.b), changes: d.changes, has_changes: Object.keys(d.changes).length > 0 }
      },
      { params: DiffParams, detail: { responses: answers({ 200: DiffAnswer, ...reads() }), summary: 'What changed from version a (old) to version b (new)' } },
    )
    .get(
      '/:id/diff-draft',
      async ({ params, workspace }) => {
        const d = await versions.diffDraft(workspace.id, params.id)
        return {
          version_a: versionRef(d.published),
          version_b: { id: null, version_number: null },
          changes: d.changes,
          has_changes: Object.keys(d.changes).length > 0,
          changed_fields: d.changedFields,
        }
      },
      {
        params: AgentParams,
        detail: {
          responses: answers({ 200: DiffDraftAnswer, ...reads(409) }),
          summary: 'What the draft changed since the published version',
          description: '409 (naming the state `draft`) when nothing is published.',
        },
      },
    )
}
