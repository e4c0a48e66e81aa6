/** Console: create templates and forms, review a template (docs/design.md table). v1: `GET /templates` (docs/spec.md). */
import { Elysia, t } from 'elysia'
import { BodyInt } from '../../http/body-types'
import { answers, consoleErrors, v1Errors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { HEADER_KINDS, TEMPLATE_CATEGORIES, TEMPLATE_STATUSES } from './repository'
import { REASON_MAX, REVIEW_STATUSES, type TemplateReview } from './review'
import { presentForm, presentTemplate, type TemplateService } from './service'

const literals = <T extends string>(values: readonly T[]) => t.Union(values.map((v) => t.Literal(v)))

const Template = t.Object({
  id: t.String(),
  name: t.String(),
  language: t.String(),
  category: literals(TEMPLATE_CATEGORIES),
  status: literals(TEMPLATE_STATUSES),
  agent: t.Union([t.String(), t.Null()]),
  number: t.Union([t.String(), t.Null()], { description: 'the chat-app number it is approved on; null: every number of the workspace' }),
  body: t.String(),
  variableCount: t.Integer(),
  variableLabels: t.Array(t.Object({ position: t.Integer(), sample: t.String() })),
  buttonVariableCount: t.Integer(),
  headerKind: literals(HEADER_KINDS),
  reason: t.Union([t.String(), t.Null()], { description: 'why it was rejected or paused in review; null otherwise' }),
  createdAt: t.String(),
})
const Form = t.Object({ id: t.String(), name: t.String(), agent: t.String(), published: t.Boolean(), createdAt: t.String() })

export function templatesConsole(deps: { auth: KernelHttp['console']; templates: TemplateService; review: TemplateReview }) {
  return new Elysia({ prefix: '/workspaces/:ws', detail: { tags: ['Console'] } })
    .use(deps.auth)
    .post(
      '/templates',
      async ({ body, set, workspace }) => {
        const { agent, ...rest } = body
        const created = await deps.templates.create(workspace.id, { ...rest, agentId: agent ?? null })
        set.status = 201
        return presentTemplate(created)
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        body: t.Object(
          {
            name: t.String({ minLength: 1, maxLength: 512, pattern: '^[a-z0-9_]+$', description: 'lower case, digits and _ (as the platforms require)' }),
            language: t.String({ minLength: 2, maxLength: 15 }),
            category: literals(TEMPLATE_CATEGORIES),
            status: t.Optional(literals(TEMPLATE_STATUSES)),
            agent: t.Optional(t.Union([t.String(), t.Null()])),
            number: t.Optional(t.Union([t.String(), t.Null()])),
            body: t.String({ minLength: 1, maxLength: 1024 }),
            variableCount: t.Optional(BodyInt({ minimum: 0 })),
            variableLabels: t.Optional(t.Array(t.Object({ position: BodyInt({ minimum: 1 }), sample: t.String() }))),
            buttonVariableCount: t.Optional(BodyInt({ minimum: 0, maximum: 2 })),
            headerKind: t.Optional(literals(HEADER_KINDS)),
          },
          { additionalProperties: false },
        ),
        detail: { summary: 'Create a message template (approved unless a status is given)', responses: answers({ 201: Template, ...consoleErrors(400, 404, 409) }) },
      },
    )
    .patch('/templates/:name', async ({ params, body, workspace }) => presentTemplate(await deps.review.review(workspace.id, params.name, body)), {
      params: t.Object({ ws: t.String(), name: t.String() }),
      workspace: true,
      body: t.Object(
        {
          status: literals(REVIEW_STATUSES),
          reason: t.Optional(t.String({ minLength: 1, maxLength: REASON_MAX, description: 'with rejected or paused: why' })),
          language: t.Optional(t.String({ minLength: 2, maxLength: 15, description: 'which language’s template, when the name exists in several' })),
        },
        { additionalProperties: false },
      ),
      detail: {
        summary: 'Review a template: submit, approve, reject, pause',
        description:
          'Moves: draft → pending; pending → approved or rejected; approved → paused; paused → approved; rejected → pending. Any other is 409 naming the current status. A rejection or a pause is notified to the developer (the customer’s name in the title inside a customer).',
        responses: answers({ 200: Template, ...consoleErrors(400, 404, 409) }),
      },
    })
    .post(
      '/forms',
      async ({ body, set, workspace }) => {
        const created = await deps.templates.createForm(workspace.id, { name: body.name, agentId: body.agent, published: body.published })
        set.status = 201
        return presentForm(created)
      },
      {
        params: t.Object({ ws: t.String() }),
        workspace: true,
        body: t.Object({ name: t.String({ minLength: 1, maxLength: 100 }), agent: t.String(), published: t.Optional(t.Boolean()) }, { additionalProperties: false }),
        detail: { summary: 'Create a form (published unless said otherwise)', responses: answers({ 201: Form, ...consoleErrors(400, 404, 409) }) },
      },
    )
}

export function templatesV1(deps: { context: KernelHttp['v1']; templates: TemplateService }) {
  return new Elysia({ prefix: '/templates', detail: { tags: ['Templates'] } })
    .use(deps.context)
    .get('', ({ query, workspace }) => paginate((limit, after) => deps.templates.page(workspace.id, query, limit, after), query, 25, presentTemplate), {
      query: t.Object({ ...pageQuery(100, 25), status: t.Optional(literals(TEMPLATE_STATUSES)), category: t.Optional(literals(TEMPLATE_CATEGORIES)) }),
      detail: { summary: 'List message templates, newest first', responses: answers({ 200: pageSchema(Template), ...v1Errors(400) }) },
    })
}
