/** Agents (v1): create, list, read, patch, delete. */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import { jsonText } from '../../http/json-text'
import { pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { Agent, CreateAgent, ListAgentsQuery, PatchAgent } from './model'
import type { AgentService } from './service'

export function agentsV1(deps: { context: KernelHttp['v1']; agents: AgentService }) {
  const { agents } = deps
  const Id = t.Object({ id: t.String() })
  return (
    new Elysia({ prefix: '/agents', detail: { tags: ['Agents'] } })
      .use(deps.context)
      .get(
        '',
        ({ query, workspace }) =>
          paginate(
            (limit, after) => agents.list(workspace.id, limit, after),
            query,
            25,
            (d) => agents.present(d),
          ),
        { query: ListAgentsQuery, detail: { responses: answers({ 200: pageSchema(Agent), ...v1Errors(400) }), summary: 'List agents, newest first' } },
      )
      .post(
        '',
        async ({ body, workspace, principal, set }) => {
          const doc = await agents.create({ workspace, plan: principal.developer.plan }, body)
          set.status = 201
          return agents.present(doc)
        },
        {
          body: CreateAgent,
          detail: {
            responses: answers({ 201: Agent, ...v1Errors(400, 403, 409) }),
            summary: 'Create an agent',
            description:
              'Only `name` is required; a starter persona, widget key and voice channel come with it. 409 only when the plan’s agent allowance is used up; a model the plan lacks (or too slow for calls) is a 400 naming `model`.',
          },
        },
      )
      // Not async: a kept agent is answered without a promise of its own (AgentService.publicJson).
      .get(
        '/:id',
        ({ params, workspace, set }) => {
          const json = agents.publicJson(workspace.id, params.id)
          return json instanceof Promise ? json.then((text) => jsonText(set, text)) : jsonText(set, json)
        },
        {
          params: Id,
          detail: { responses: answers({ 200: Agent, ...v1Errors(404) }), summary: 'Read an agent' },
        },
      )
      .patch('/:id', async ({ params, body, workspace, principal }) => agents.present(await agents.patch({ workspace, plan: principal.developer.plan }, params.id, body)), {
        params: Id,
        body: PatchAgent,
        detail: {
          responses: answers({ 200: Agent, ...v1Errors(400, 403, 404) }),
          summary: 'Change any subset of an agent’s fields',
          description: '400 naming the field that breaks a rule, `model` included (a model the plan lacks, or one too slow for calls on a phone agent, when changing to it).',
        },
      })
      .delete(
        '/:id',
        async ({ params, workspace, set }) => {
          await agents.remove(workspace.id, params.id)
          set.status = 204
          return null
        },
        { params: Id, detail: { responses: answers({ 204: t.Null(), ...v1Errors(403, 404) }), summary: 'Delete an agent with its conversations, knowledge and channels' } },
      )
  )
}
