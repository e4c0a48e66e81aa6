/** Console: create a sequence (docs/design.md). v1: `GET /sequences`, `POST /sequences/{id}/enrolments` (docs/spec.md). */
import { Elysia, t } from 'elysia'
import { BodyInt } from '../../http/body-types'
import { answers, consoleErrors, v1Errors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { MAX_VARIABLES, presentSequence, type SequenceService } from './service'

const Sequence = t.Object({ id: t.String(), name: t.String(), status: t.Union([t.Literal('active'), t.Literal('archived')]), agent: t.String(), exitOnReply: t.Boolean(), createdAt: t.String() })

export function sequencesConsole(deps: { auth: KernelHttp['console']; sequences: SequenceService }) {
  return new Elysia({ prefix: '/workspaces/:ws/sequences', detail: { tags: ['Console'] } }).use(deps.auth).post(
    '',
    async ({ body, set, workspace }) => {
      set.status = 201
      return presentSequence(await deps.sequences.create(workspace.id, { name: body.name, agentId: body.agent, exitOnReply: body.exitOnReply, status: body.status, steps: body.steps }))
    },
    {
      params: t.Object({ ws: t.String() }),
      workspace: true,
      body: t.Object(
        {
          name: t.String({ minLength: 1, maxLength: 100 }),
          agent: t.String(),
          exitOnReply: t.Optional(t.Boolean({ description: 'a reply stops it (default true)' })),
          status: t.Optional(t.Union([t.Literal('active'), t.Literal('archived')])),
          steps: t.Array(
            t.Object(
              {
                template: t.Optional(t.String()),
                text: t.Optional(t.String({ maxLength: 4096 })),
                delayMinutes: BodyInt({ minimum: 0, maximum: 525_600, description: 'after the previous step (the first: after enrolling)' }),
              },
              { additionalProperties: false },
            ),
            { maxItems: 50 },
          ),
        },
        { additionalProperties: false },
      ),
      detail: { summary: 'Create a sequence of messages', responses: answers({ 201: Sequence, ...consoleErrors(400, 404) }) },
    },
  )
}

export function sequencesV1(deps: { context: KernelHttp['v1']; sequences: SequenceService }) {
  return new Elysia({ prefix: '/sequences', detail: { tags: ['Sequences'] } })
    .use(deps.context)
    .get('', ({ query, workspace }) => paginate((limit, after) => deps.sequences.page(workspace.id, limit, after), query, 25, presentSequence), {
      query: t.Object(pageQuery(100, 25)),
      detail: { summary: 'List active sequences, newest first', responses: answers({ 200: pageSchema(Sequence), ...v1Errors(400) }) },
    })
    .post('/:sequenceId/enrolments', ({ params, body, workspace }) => deps.sequences.enrol(workspace, params.sequenceId, body), {
      params: t.Object({ sequenceId: t.String() }),
      body: t.Object(
        { to: t.String(), variables: t.Optional(t.Record(t.String(), t.String(), { description: `at most ${MAX_VARIABLES}; names ≤ 60 characters, values ≤ 300` })) },
        { additionalProperties: false },
      ),
      detail: {
        summary: 'Enrol a contact in a sequence',
        description: '200 `{ enrolled: false, reason }` (not errors): already_enrolled, not_a_contact, opted_out, no_first_message. Over a variables cap: 400, never trimmed.',
        responses: answers({ 200: t.Union([t.Object({ enrolled: t.Literal(true), id: t.String() }), t.Object({ enrolled: t.Literal(false), reason: t.String() })]), ...v1Errors(400, 403, 404) }),
      },
    })
}
