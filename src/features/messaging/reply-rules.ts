/**
 * The reply body (docs/spec.md reply table) checked before anything is sent: exactly one kind, each
 * member's own limits. The conversation-side rules (window, takeover, opt-out, number) are the
 * service's (reply.ts).
 */

import { blockedReason, isLocalhostName } from '../../net/address-guard'
import type { OutboundContent } from '../../providers/messaging/port'
import { invalid } from '../../refusals'

/** docs/spec.md: text up to 4,096 characters; a media URL up to 2,048. */
export const MAX_REPLY_TEXT = 4_096
export const MAX_MEDIA_URL = 2_048
/** The customer's service window (docs/spec.md: 24 hours after they last wrote). */
export const WINDOW_MS = 24 * 60 * 60 * 1000

export interface ReplyBody {
  text?: string
  media?: { type: 'image' | 'video' | 'audio' | 'file'; url: string; caption?: string; filename?: string }
  form?: string | { name: string }
  template?: { name: string; language?: string; variables?: string[]; buttonVariables?: string[]; headerMediaUrl?: string }
}

const KINDS = ['text', 'media', 'form', 'template'] as const

/** A reply body checked on its own: ready content, or the form/template it names (resolved by the service). */
export type CheckedReply = { kind: 'content'; content: OutboundContent } | { kind: 'form'; name: string } | { kind: 'template'; template: NonNullable<ReplyBody['template']> }

export function checkReply(body: ReplyBody): CheckedReply {
  const given = KINDS.filter((k) => body[k] !== undefined)
  if (given.length !== 1) throw invalid('body', `send one of text, media, form or template${given.length ? `, not ${given.join(' and ')}` : ''}`)
  if (body.text !== undefined) {
    if (!body.text.trim()) throw invalid('text', 'must not be blank')
    if (body.text.length > MAX_REPLY_TEXT) throw invalid('text', `must be at most ${MAX_REPLY_TEXT} characters`)
    return { kind: 'content', content: { type: 'text', text: body.text } }
  }
  if (body.media !== undefined) {
    const m = body.media
    checkPublicHttps(m.url, 'media.url')
    if (m.caption !== undefined && m.type !== 'image' && m.type !== 'video') throw invalid('media.caption', 'only an image or a video takes a caption')
    if (m.filename !== undefined && m.type !== 'file') throw invalid('media.filename', 'only a file (document) takes a filename')
    return {
      kind: 'content',
      content: { type: 'media', media: { type: m.type, url: m.url, ...(m.caption !== undefined ? { caption: m.caption } : {}), ...(m.filename !== undefined ? { filename: m.filename } : {}) } },
    }
  }
  if (body.form !== undefined) return { kind: 'form', name: typeof body.form === 'string' ? body.form : body.form.name }
  const template = body.template!
  if (template.headerMediaUrl !== undefined) checkPublicHttps(template.headerMediaUrl, 'template.headerMediaUrl')
  return { kind: 'template', template }
}

/** A template send's values against what the template needs (docs/spec.md Template). */
export function templateValues(
  template: { name: string; variableCount: number; buttonVariableCount: number; headerKind: string },
  given: NonNullable<ReplyBody['template']>,
): { variables: string[]; buttonVariables: string[]; headerMediaUrl: string | null } {
  const variables = given.variables ?? []
  if (variables.length !== template.variableCount) throw invalid('template.variables', `"${template.name}" takes ${template.variableCount} variables, in order (${variables.length} given)`)
  const buttonVariables = given.buttonVariables ?? []
  if (buttonVariables.length !== template.buttonVariableCount)
    throw invalid('template.buttonVariables', `"${template.name}" takes ${template.buttonVariableCount} button variables (${buttonVariables.length} given)`)
  const needsMedia = template.headerKind === 'image' || template.headerKind === 'video' || template.headerKind === 'document'
  if (needsMedia && !given.headerMediaUrl) throw invalid('template.headerMediaUrl', `"${template.name}" has a ${template.headerKind} header: pass its https link`)
  if (!needsMedia && given.headerMediaUrl !== undefined) throw invalid('template.headerMediaUrl', `"${template.name}" has no media header`)
  return { variables, buttonVariables, headerMediaUrl: given.headerMediaUrl ?? null }
}

function checkPublicHttps(raw: string, field: string): void {
  if (raw.length > MAX_MEDIA_URL) throw invalid(field, `must be at most ${MAX_MEDIA_URL} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalid(field, 'is not a URL')
  }
  if (url.protocol !== 'https:') throw invalid(field, 'must be an https link')
  if (url.username || url.password) throw invalid(field, 'must not carry a user name or password')
  // The platform fetches it: a name or literal address it cannot reach from the internet is refused.
  const blocked = blockedReason(url.hostname)
  if (isLocalhostName(url.hostname) || (blocked !== null && blocked !== 'not an IP address')) throw invalid(field, 'must be a public address')
}
