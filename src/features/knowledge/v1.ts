/** Knowledge (v1): list, add (a URL fetched before answering, or pasted text), delete. */
import { Elysia, t } from 'elysia'
import { answers, v1Errors } from '../../http/docs'
import { pageQuery, pageSchema, paginate } from '../../http/pagination'
import type { KernelHttp } from '../../kernel/feature'
import { Refused } from '../../refusals'
import type { AgentService } from '../agents/public'
import { KnowledgeDocumentResponse, KnowledgeError, MAX_TEXT_CHARS, MAX_TITLE_CHARS, MAX_URL_CHARS, toDocumentResponse } from './model'
import type { KnowledgeService } from './service'

/** `text must not be empty` with field `text` → `text: must not be empty` (v1 errors start with the field). */
function asRefusal(error: unknown): never {
  if (error instanceof KnowledgeError) {
    const { field, status, message } = error
    const words = field && message.startsWith(`${field} `) ? message.slice(field.length + 1) : message
    throw new Refused(status === 404 ? 'not_found' : 'invalid', field ? `${field}: ${words}` : message, field ? { field } : undefined)
  }
  throw error
}

// One object instead of a union, so a wrong body gets a message naming the field.
const AddBody = t.Object(
  {
    url: t.Optional(t.String({ minLength: 1, maxLength: MAX_URL_CHARS, description: 'a page to fetch and index (before the answer)' })),
    text: t.Optional(t.String({ minLength: 1, maxLength: MAX_TEXT_CHARS, description: 'pasted text, up to 200,000 characters' })),
    title: t.Optional(t.String({ minLength: 1, maxLength: MAX_TITLE_CHARS, description: 'with `text` only' })),
  },
  { additionalProperties: false, description: 'either `{ url }` or `{ text, title? }`' },
)

export function knowledgeV1(deps: { context: KernelHttp['v1']; agents: AgentService; knowledge: KnowledgeService }) {
  const { agents, knowledge } = deps
  const Id = t.Object({ id: t.String() })
  return new Elysia({ prefix: '/agents/:id/knowledge', detail: { tags: ['Knowledge'] } })
    .use(deps.context)
    .get(
      '',
      async ({ params, query, workspace }) => {
        await agents.get(workspace.id, params.id)
        return paginate((limit, after) => knowledge.page(workspace.id, params.id, limit, after).catch(asRefusal), query, 25, toDocumentResponse)
      },
      {
        params: Id,
        query: t.Object(pageQuery(100, 25)),
        detail: { responses: answers({ 200: pageSchema(KnowledgeDocumentResponse), ...v1Errors(400, 404) }), summary: 'List an agent’s knowledge documents, newest first' },
      },
    )
    .post(
      '',
      async ({ params, body, workspace, set }) => {
        await agents.get(workspace.id, params.id)
        // Asked again once the document is stored: the agent may be deleted during the fetch.
        const agentExists = () => agents.exists(workspace.id, params.id)
        const doc = await knowledge.add({ workspaceId: workspace.id, agentId: params.id, ...body }, agentExists).catch(asRefusal)
        set.status = 201
        return toDocumentResponse(doc)
      },
      {
        params: Id,
        body: AddBody,
        detail: {
          responses: answers({ 201: KnowledgeDocumentResponse, ...v1Errors(400, 403, 404) }),
          summary: 'Add knowledge: a URL (fetched and indexed before the answer) or pasted text',
          description: 'A page that needs scripting or refuses us is stored as `failed` with `error`. Addresses inside our own network are refused.',
        },
      },
    )
    .delete(
      '/:documentId',
      async ({ params, workspace, set }) => {
        await agents.get(workspace.id, params.id)
        await knowledge.remove(workspace.id, params.id, params.documentId).catch(asRefusal)
        set.status = 204
        return null
      },
      { params: t.Object({ id: t.String(), documentId: t.String() }), detail: { responses: answers({ 204: t.Null(), ...v1Errors(403, 404) }), summary: 'Remove a document and every passage of it' } },
    )
}
