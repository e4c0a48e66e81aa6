/**
 * Conversation and message (v1): docs/spec.md "Conversation and message" and the Conversations
 * endpoints. Stored shapes, their public forms, and the list queries.
 */
import { t } from 'elysia'
import { pageQuery } from '../../http/pagination'

export const CHANNELS = ['chatapp', 'web', 'botapp', 'voice', 'email'] as const
export type Channel = (typeof CHANNELS)[number]

/**
 * docs/spec.md shows `active` and names `escalated` and `resolved`; the full set is ours:
 * - `active`: the agent answers;
 * - `escalated`: the agent handed it to the team and a person has not taken it yet (the agent
 *   keeps answering meanwhile, so the customer is never left alone);
 * - `handled`: a teammate took it over; the agent stays quiet;
 * - `resolved`: a teammate marked it done, or (voice) the call ended while the agent had it; the
 *   customer writing again reopens it as `active`.
 */
export const STATUSES = ['active', 'escalated', 'handled', 'resolved'] as const
export type ConversationStatus = (typeof STATUSES)[number]

/** docs/spec.md: `customer`, `teammate`, and the agent's own replies (value not shown): `agent`. */
export const AUTHORS = ['customer', 'teammate', 'agent'] as const
export type Author = (typeof AUTHORS)[number]

export type MessagePart =
  | { type: 'text'; text: string }
  | { type: 'image'; url: string; alt: string | null }
  /** A customer's video, voice note or document (docs/spec.md leaves these part types to us). */
  | { type: 'video' | 'audio' | 'file'; url: string; name: string | null }

/** One tool call the agent made while writing a reply: what test chat shows as `tools`. */
export interface ToolRun {
  id: string
  name: string
  input: Record<string, unknown>
  output: unknown
}

export interface ConversationDoc {
  [field: string]: unknown
  id: string
  workspaceId: string
  agentId: string
  channel: Channel
  /** `id` is the contact's id when the customer is a known contact; `phone` in E.164 or null. */
  customer: { id: string | null; phone: string | null }
  /** Who the customer is for analytics' distinct count: contact id, else phone, else this conversation. */
  customerKey: string
  status: ConversationStatus
  /** Started from test chat (POST /agents/{id}/test-chat). */
  test: boolean
  /** A simulations run's conversation (also `test`): never billed, kept out of analytics; its messages carry the flag too. */
  simulated?: true
  /** When the customer last wrote; null until they do (an outbound call nobody answered). */
  lastInboundAt: string | null
  createdAt: string
  updatedAt: string
}

export interface MessageDoc {
  [field: string]: unknown
  id: string
  conversationId: string
  workspaceId: string
  agentId: string
  author: Author
  parts: MessagePart[]
  /** A team note: kept for the team, never returned by the API nor shown to the model. */
  internal: boolean
  /** Agent replies only: the tool calls made for this reply (not public; test chat shows them). */
  tools?: ToolRun[]
  /** Agent replies only: the model that wrote it and its token usage (for billing later). */
  model?: string
  usage?: { inputTokens: number; outputTokens: number }
  /** Agent replies only: the published version that answered; absent for test chat (the draft). */
  agentVersion?: number
  /** A message of a simulations run's conversation: kept out of analytics. */
  simulated?: true
  createdAt: string
}

// ---- HTTP schemas ----

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])
/** Written out (not mapped from the arrays above) so the static types stay literal unions. */
const ChannelSchema = t.Union([t.Literal('chatapp'), t.Literal('web'), t.Literal('botapp'), t.Literal('voice'), t.Literal('email')])
const StatusSchema = t.Union([t.Literal('active'), t.Literal('escalated'), t.Literal('handled'), t.Literal('resolved')], {
  description: 'active, escalated (waiting for a person), handled (a teammate took over), resolved',
})
const AuthorSchema = t.Union([t.Literal('customer'), t.Literal('teammate'), t.Literal('agent')], { description: '`agent` for the agent’s own replies' })

export const Conversation = t.Object({
  id: t.String({ description: 'conv_<id>' }),
  agent: t.String({ description: 'the agent (ag_<id>) that talks in it' }),
  channel: ChannelSchema,
  customer: t.Object({ id: Nullable(t.String()), phone: Nullable(t.String()) }),
  status: StatusSchema,
  test: t.Boolean({ description: 'true for a test chat' }),
  lastInboundAt: Nullable(t.String({ description: 'when the customer last wrote' })),
  createdAt: t.String(),
})
export type Conversation = typeof Conversation.static

const TextPart = t.Object({ type: t.Literal('text'), text: t.String() })
const ImagePart = t.Object({ type: t.Literal('image'), url: t.String(), alt: Nullable(t.String()) })
const MediaPart = t.Object(
  { type: t.Union([t.Literal('video'), t.Literal('audio'), t.Literal('file')]), url: t.String(), name: Nullable(t.String()) },
  { description: 'a video, voice note or document the customer sent; url: our link, valid for eight hours from this answer' },
)

export const Message = t.Object({
  id: t.String({ description: 'msg_<id>' }),
  conversationId: t.String(),
  author: AuthorSchema,
  parts: t.Array(t.Union([TextPart, ImagePart, MediaPart])),
  createdAt: t.String(),
})
export type Message = typeof Message.static

const Since = (description: string) => t.Optional(t.String({ description }))

export const ListConversationsQuery = t.Object({
  channel: t.Optional(ChannelSchema),
  since: Since('ISO 8601 instant or date; keeps conversations whose customer last wrote at or after it'),
  // docs/spec.md Limits: conversations max 100, default 25.
  ...pageQuery(100, 25),
})
export type ListConversationsQuery = typeof ListConversationsQuery.static

export const ListMessagesQuery = t.Object({
  since: Since('ISO 8601 instant or date; keeps messages written after it'),
  // docs/spec.md Limits: messages max 100, default 25.
  ...pageQuery(100, 25),
})
export type ListMessagesQuery = typeof ListMessagesQuery.static

export function presentConversation(doc: ConversationDoc): Conversation {
  return {
    id: doc.id,
    agent: doc.agentId,
    channel: doc.channel,
    customer: { id: doc.customer.id, phone: doc.customer.phone },
    status: doc.status,
    test: doc.test,
    lastInboundAt: doc.lastInboundAt,
    createdAt: doc.createdAt,
  }
}

/**
 * A stored media reference (`file:<id>`) becomes a link when the message is read (`link`: the
 * messaging feature's signed links, valid eight hours from now); other URLs pass as stored.
 */
export function presentMessage(doc: MessageDoc, link?: (ref: string) => string): Message {
  const parts = link ? doc.parts.map((p) => ('url' in p && p.url.startsWith('file:') ? { ...p, url: link(p.url) } : p)) : doc.parts
  return { id: doc.id, conversationId: doc.conversationId, author: doc.author, parts, createdAt: doc.createdAt }
}
