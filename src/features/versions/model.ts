/** Agent versions (legacy) schemas: docs/spec.md "Agent version (legacy)" and the "Agent versions (legacy)" bodies. */
import { t } from 'elysia'
import { BodyInt } from '../../http/body-types'
import { ENVIRONMENTS, type VersionDoc } from './repository'
import { PANELS, reshape } from './snapshot'

/** Lengths are not shown in docs/spec.md: a label fits a tag such as `v12` or `release-2025-01`, a summary a commit message. */
export const LABEL_MAX = 100
export const SUMMARY_MAX = 1000

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

const environment = (description: string) => t.Union([t.Literal(ENVIRONMENTS[0]), t.Literal(ENVIRONMENTS[1]), t.Literal(ENVIRONMENTS[2])], { description })
export const Environment = environment('development → staging → production')

export const AgentParams = t.Object({ id: t.String({ description: 'the agent: its legacy integer id (as `agent_id` answers give it) or its v1 id (`ag_…`)' }) })
const Vid = t.Integer({ minimum: 1, description: 'a version number of this agent (version ids are per agent)' })
export const VersionParams = t.Object({ id: AgentParams.properties.id, vid: Vid })
/** The router keeps one parameter name per path position, so docs/spec.md's `{a}`/`{b}` are `{vid}`/`{vid_b}`. */
export const DiffParams = t.Object({ id: AgentParams.properties.id, vid: Vid, vid_b: Vid })

export const PublishBody = t.Optional(t.Object({ change_summary: t.Optional(Nullable(t.String({ maxLength: SUMMARY_MAX }))) }, { additionalProperties: false }))

export const CheckpointBody = t.Object(
  {
    change_summary: t.Optional(Nullable(t.String({ maxLength: SUMMARY_MAX }))),
    version_label: t.Optional(Nullable(t.String({ minLength: 1, maxLength: LABEL_MAX, description: 'default `v<n>`' }))),
    environment: t.Optional(environment('development → staging → production; default development')),
  },
  { additionalProperties: false },
)

export const PromoteBody = t.Object(
  {
    version_id: t.Optional(BodyInt({ description: 'the version in the path; a different one is refused (400)' })),
    target_environment: Environment,
  },
  { additionalProperties: false },
)

const panel = (description: string) => t.Object({}, { additionalProperties: true, description })

export const Snapshot = t.Object(
  {
    core: panel('name, model, instructions, greeting, business description, temperature, reply tokens, languages'),
    tools: panel('escalation, lead capture, callbacks'),
    knowledge: panel('documentIds: the linked knowledge documents'),
    voice: panel('the voice channel: answers calls, voice, language, summaries, machine detection, recording, call length, end-of-turn silence'),
    widget: panel('the website widget: theme, accent, height, welcome screen and lead form, on or off'),
    workflow: panel('steps, in order'),
    dataCollection: panel('collectFields: what is filled in after every call'),
  },
  { description: `the whole agent, by console panel (${PANELS.join(', ')})` },
)

const versionFields = {
  id: t.Integer({ description: 'equals version_number: version ids are per agent' }),
  version_number: t.Integer(),
  version_label: t.String(),
  name: t.String({ description: "the agent's name in this version" }),
  environment: Environment,
  is_active: t.Boolean({ description: 'the version live chat and voice are served' }),
  created_by: t.String({ description: 'the id of the API key that made it' }),
  created_at: t.String(),
  change_summary: Nullable(t.String()),
}

export const AgentVersion = t.Object(versionFields)
export const AgentVersionWithSnapshot = t.Object({ ...versionFields, snapshot: Snapshot })

export const PublishAnswer = t.Object({
  success: t.Boolean(),
  status: t.Literal('published'),
  version_id: t.Integer(),
  version_number: t.Integer(),
  version_label: t.String(),
})

export const UnpublishAnswer = t.Object({ success: t.Boolean(), status: t.Literal('draft'), agent_id: t.Integer({ description: "the agent's legacy integer id" }) })

export const StatusAnswer = t.Object({
  agent_id: t.Integer({ description: "the agent's legacy integer id: what `agent_id` takes on legacy webhook endpoints and `{id}` takes here" }),
  status: t.Union([t.Literal('draft'), t.Literal('published')]),
  published_version_id: Nullable(t.Integer()),
  last_published_at: Nullable(t.String()),
  has_unpublished_changes: t.Boolean(),
  changed_fields: t.Array(t.String(), { description: `panels that differ between the draft and the published version (${PANELS.join(', ')})` }),
})

export const VersionList = t.Object({ versions: t.Array(AgentVersion, { description: 'newest first' }) })

export const RollbackAnswer = t.Object({
  success: t.Boolean(),
  message: t.String(),
  agent_id: t.Integer({ description: "the agent's legacy integer id" }),
  backup_version_id: t.Integer({ description: 'the backup of the agent as it was before the rollback' }),
  version_id: t.Integer({ description: 'the new published version, with the restored snapshot' }),
})

const Changes = t.Record(t.String(), t.Object({ old: t.Unknown(), new: t.Unknown() }), {
  description: 'by field path, e.g. `core.instructions`; only fields that differ',
})
const VersionRef = t.Object({ id: t.Integer(), version_number: t.Integer() })

export const DiffAnswer = t.Object({ version_a: VersionRef, version_b: VersionRef, changes: Changes, has_changes: t.Boolean() })

export const DiffDraftAnswer = t.Object({
  version_a: t.Object(VersionRef.properties, { description: 'the published version' }),
  version_b: t.Object({ id: t.Null(), version_number: t.Null() }, { description: 'the draft (no version yet)' }),
  changes: Changes,
  has_changes: t.Boolean(),
  changed_fields: StatusAnswer.properties.changed_fields,
})

/** A version as the legacy surface shows it; `snapshot` only on a single read. */
export function presentVersion(doc: VersionDoc): typeof AgentVersion.static
export function presentVersion(doc: VersionDoc, withSnapshot: true): typeof AgentVersionWithSnapshot.static
export function presentVersion(doc: VersionDoc, withSnapshot = false) {
  const base = {
    id: doc.number,
    version_number: doc.number,
    version_label: doc.label,
    name: doc.name,
    environment: doc.environment,
    is_active: doc.isActive,
    created_by: doc.createdBy,
    created_at: doc.createdAt,
    change_summary: doc.changeSummary,
  }
  return withSnapshot ? { ...base, snapshot: reshape(doc.snapshot) } : base
}

export const versionRef = (doc: VersionDoc) => ({ id: doc.number, version_number: doc.number })
