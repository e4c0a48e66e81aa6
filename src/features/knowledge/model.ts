/**
 * Knowledge: stored shapes, request/response schemas and the feature's error type.
 * Only the schemas know about Elysia; service.ts and repository.ts use the plain types.
 */
import { t } from 'elysia'

/** docs/spec.md Limits: "Knowledge text 200,000 characters" (JavaScript string length). */
export const MAX_TEXT_CHARS = 200_000
/** A title is a label in lists; 200 matches the other short labels of docs/spec.md (greeting). */
export const MAX_TITLE_CHARS = 200
/** docs/spec.md caps stored media URLs at 2,048 characters; a page URL gets the same room. */
export const MAX_URL_CHARS = 2_048

export type DocumentStatus = 'ready' | 'failed'

export type KnowledgeDocument = {
  /** `doc_<id>` */
  id: string
  workspaceId: string
  agentId: string
  title: string
  type: 'text' | 'url'
  /** `pasted` for text; the URL as given for a page. */
  source: string
  status: DocumentStatus
  /** Why a `failed` document could not be read; null when ready. */
  error: string | null
  /** How many passages were indexed. */
  passages: number
  createdAt: string
}

export type Passage = {
  /** `psg_<id>` (internal; docs/spec.md gives passages no public id). */
  id: string
  workspaceId: string
  agentId: string
  documentId: string
  /** 0-based order within the document. */
  position: number
  text: string
  /** The document's title, kept on every passage so a hit can name its source. */
  title: string
  createdAt: string
}

/** One knowledge search, logged for analytics (knowledgeGaps, topQuestions, answerRate). */
export type KnowledgeSearch = {
  id: string
  workspaceId: string
  agentId: string
  /** The question with whitespace collapsed, as shown in analytics. */
  query: string
  /** Lower-cased, punctuation-trimmed form for grouping the same question asked differently. */
  queryKey: string
  found: boolean
  /** Similarity (0–1) of the best passage; 0 when nothing matched. */
  bestSimilarity: number
  /** Searched in a simulations run's conversation: kept out of analytics. */
  simulated?: true
  createdAt: string
}

/** Thrown by the service; its v1 routes refuse with it (400 invalid, 404 not there), naming `field`. */
export class KnowledgeError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404,
    readonly field?: string,
  ) {
    super(message)
    this.name = 'KnowledgeError'
  }
}

// ---- HTTP schemas (TypeBox through Elysia's `t`) ----

export const AddUrlBody = t.Object({ url: t.String({ minLength: 1, maxLength: MAX_URL_CHARS, description: 'an http(s) page to fetch and index' }) }, { additionalProperties: false })
export type AddUrlBody = typeof AddUrlBody.static

export const AddTextBody = t.Object(
  {
    text: t.String({ minLength: 1, maxLength: MAX_TEXT_CHARS, description: 'pasted text to index' }),
    title: t.Optional(t.String({ minLength: 1, maxLength: MAX_TITLE_CHARS })),
  },
  { additionalProperties: false },
)
export type AddTextBody = typeof AddTextBody.static

/** POST /agents/{id}/knowledge: either `{ url }` or `{ text, title? }`. */
export const AddKnowledgeBody = t.Union([AddUrlBody, AddTextBody])
export type AddKnowledgeBody = typeof AddKnowledgeBody.static

export const KnowledgeDocumentResponse = t.Object({
  id: t.String({ description: 'doc_<id>' }),
  title: t.String(),
  type: t.Union([t.Literal('text'), t.Literal('url')]),
  source: t.String({ description: '`pasted` for text, else the URL' }),
  status: t.Union([t.Literal('ready'), t.Literal('failed')]),
  error: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: 'date-time' }),
  passages: t.Integer({ minimum: 0 }),
})
export type KnowledgeDocumentResponse = typeof KnowledgeDocumentResponse.static

/** The public shape of a stored document (drops workspace and agent ids). */
export function toDocumentResponse(doc: KnowledgeDocument): KnowledgeDocumentResponse {
  return {
    id: doc.id,
    title: doc.title,
    type: doc.type,
    source: doc.source,
    status: doc.status,
    error: doc.error,
    createdAt: doc.createdAt,
    passages: doc.passages,
  }
}
