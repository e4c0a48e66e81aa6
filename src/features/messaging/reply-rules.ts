/**
 * The reply body (SPEC.md reply table) checked before anything is sent: exactly one kind, each
 * member's own limits. The conversation-side rules (window, takeover, opt-out, number) are the
 * service's (reply.ts).
 */
import { ApiError, badRequest } from '../../http/errors'
import { blockedReason, isLocalhostName } from '../../net/address-guard'
import type { OutboundContent } from '../../providers/messaging/port'

/** SPEC.md: text up to 4,096 characters; a media URL up to 2,048. */
export const MAX_REPLY_TEXT = 4_096
export const MAX_MEDIA_URL = 2_048
/** The customer's service window (SPEC.md: 24 hours after they last wrote). */
export const WINDOW_MS = 24 * 60 * 60 * 1000

export interface ReplyBody {
  text?: string
  media?: { type: 'image' | 'video' | 'audio' | 'file'; url: string; caption?: string; filename?: string }
  form?: string | { name: string }
  template?: { name: string; language?: string; variables?: string[]; buttonVariables?: string[]; headerMediaUrl?: string }
}

const KINDS = ['text', 'media', 'form', 'template'] as const

export function replyContent(body: ReplyBody): OutboundContent {
  const given = KINDS.filter((k) => body[k] !== undefined)
  if (given.length !== 1) throw new ApiError(400, given.length ? `send one of text, media, form or template, not ${given.join(' and ')}` : 'send one of text, media, form or template', { field: given[1] ?? 'text' })
  if (body.text !== undefined) {
    if (!body.text.trim()) throw badRequest('text', 'must not be blank')
    if (body.text.length > MAX_REPLY_TEXT) throw badRequest('text', `must be at most ${MAX_REPLY_TEXT} characters`)
    return { type: 'text', text: body.text }
  }
  if (body.media !== undefined) {
    const m = body.media
    checkPublicHttps(m.url)
    if (m.caption !== undefined && m.type !== 'image' && m.type !== 'video') throw badRequest('media.caption', 'only an image or a video takes a caption')
    if (m.filename !== undefined && m.type !== 'file') throw badRequest('media.filename', 'only a file (document) takes a filename')
    return { type: 'media', media: { type: m.type, url: m.url, ...(m.caption !== undefined ? { caption: m.caption } : {}), ...(m.filename !== undefined ? { filename: m.filename } : {}) } }
  }
  const kind = body.form !== undefined ? 'form' : 'template'
  // Forms and templates are resources of their own (console-created, approved per number); they
  // arrive with the rest of issue 12, and until then none exists to be named.
  const name = body.form !== undefined ? (typeof body.form === 'string' ? body.form : body.form.name) : body.template!.name
  throw badRequest(kind, `no ${kind} named "${name}" exists in this workspace`)
}

function checkPublicHttps(raw: string): void {
  if (raw.length > MAX_MEDIA_URL) throw badRequest('media.url', `must be at most ${MAX_MEDIA_URL} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw badRequest('media.url', 'is not a URL')
  }
  if (url.protocol !== 'https:') throw badRequest('media.url', 'must be an https link')
  if (url.username || url.password) throw badRequest('media.url', 'must not carry a user name or password')
  const host = url.hostname
  // The platform fetches it: an address it cannot reach from the internet is refused here.
  if (isLocalhostName(host) || (blockedReason(host) === null ? false : blockedReason(host) !== 'not an IP address')) throw badRequest('media.url', 'must be a public address')
}
