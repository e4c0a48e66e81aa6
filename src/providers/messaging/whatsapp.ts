/**
 * WhatsApp Cloud API (https://developers.facebook.com/docs/whatsapp/cloud-api): sends with
 * `POST {base}/{version}/{phone-number-id}/messages` (Bearer token) and receives its webhook:
 * `GET` verification (`hub.mode=subscribe`, `hub.verify_token`, echo `hub.challenge`) and `POST`
 * notifications signed `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body, app secret>`,
 * carrying `messages` (inbound) and `statuses` (sent/delivered/read/failed with error codes).
 * The base URL is configurable so tests point it at a local fake.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { type MessagingPlatform, type OutboundContent, PlatformRefused, type Receipt, type SendRequest, type Sent } from './port'

/** Graph API answers a send in well under a second; 10 s bounds a stalled one (the reply answers 502). */
export const SEND_TIMEOUT_MS = 10_000

export interface WhatsAppConfig {
  accessToken: string
  appSecret: string
  verifyToken: string
  /** Default https://graph.facebook.com */
  baseUrl: string
  /** Graph API version, e.g. v21.0. */
  version: string
  /** Our number (E.164) → its WhatsApp phone-number id. */
  phoneNumberId: (number: string) => Promise<string | null>
}

export interface InboundMedia {
  /** WhatsApp's media id (downloaded with `download`). */
  mediaId: string
  type: 'image' | 'video' | 'audio' | 'file'
  mime: string
  caption: string | null
  name: string | null
}

export interface InboundChat {
  /** Our number (E.164) and its platform id. */
  to: string
  phoneNumberId: string
  from: string
  platformMessageId: string
  at: number
  text: string
  name: string | null
  media: InboundMedia | null
}

const digits = (e164: string) => e164.replace(/^\+/, '')
const e164 = (waId: string) => (waId.startsWith('+') ? waId : `+${waId}`)

export function whatsAppBody(to: string, content: OutboundContent): Record<string, unknown> {
  const base = { messaging_product: 'whatsapp', recipient_type: 'individual', to: digits(to) }
  if (content.type === 'text') return { ...base, type: 'text', text: { preview_url: false, body: content.text } }
  if (content.type === 'media') {
    const m = content.media
    const kind = m.type === 'file' ? 'document' : m.type
    return { ...base, type: kind, [kind]: { link: m.url, ...(m.caption !== undefined ? { caption: m.caption } : {}), ...(m.filename !== undefined ? { filename: m.filename } : {}) } }
  }
  if (content.type === 'template') {
    const t = content.template
    const components = t.variables.length ? [{ type: 'body', parameters: t.variables.map((text) => ({ type: 'text', text })) }] : []
    return { ...base, type: 'template', template: { name: t.name, language: { code: t.language }, components } }
  }
  return {
    ...base,
    type: 'interactive',
    interactive: { type: 'flow', body: { text: content.form.name }, action: { name: 'flow', parameters: { flow_message_version: '3', flow_name: content.form.name, flow_cta: 'Open' } } },
  }
}

export class WhatsAppPlatform implements MessagingPlatform {
  readonly name = 'whatsapp'
  private readonly listeners: ((r: Receipt) => Promise<void> | void)[] = []

  constructor(private readonly config: WhatsAppConfig) {}

  async send(request: SendRequest): Promise<Sent> {
    const id = await this.config.phoneNumberId(request.from)
    if (!id) throw new PlatformRefused(`${request.from} has no WhatsApp phone-number id (it has not been connected)`, 'not_connected')
    const url = `${this.config.baseUrl.replace(/\/$/, '')}/${this.config.version}/${id}/messages`
    let res: Response
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.config.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...whatsAppBody(request.to, request.content), ...(request.ref ? { biz_opaque_callback_data: request.ref } : {}) }),
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      })
    } catch (err) {
      throw new PlatformRefused(`WhatsApp could not be reached: ${(err as Error).message}`, 'unreachable')
    }
    const body = (await res.json().catch(() => null)) as { messages?: { id: string }[]; error?: { message?: string; code?: number } } | null
    if (!res.ok || !body?.messages?.[0]?.id)
      throw new PlatformRefused(
        `WhatsApp: ${(body?.error?.message ?? `HTTP ${res.status}`).split(this.config.accessToken).join('***')}`,
        body?.error?.code !== undefined ? String(body.error.code) : String(res.status),
      )
    return { platformMessageId: body.messages[0].id }
  }

  onReceipt(listener: (receipt: Receipt) => Promise<void> | void): void {
    this.listeners.push(listener)
  }

  /** A received media file: Graph gives its short-lived URL (`GET /{media-id}`), fetched with the same token. */
  async download(mediaId: string, maxBytes: number): Promise<{ bytes: Uint8Array; mime: string }> {
    const base = this.config.baseUrl.replace(/\/$/, '')
    const auth = { authorization: `Bearer ${this.config.accessToken}` }
    const meta = await fetch(`${base}/${this.config.version}/${encodeURIComponent(mediaId)}`, { headers: auth, signal: AbortSignal.timeout(SEND_TIMEOUT_MS) })
    const info = (await meta.json().catch(() => null)) as { url?: string; mime_type?: string; file_size?: number } | null
    if (!meta.ok || !info?.url) throw new Error(`WhatsApp media ${mediaId}: HTTP ${meta.status}`)
    if ((info.file_size ?? 0) > maxBytes) throw new Error(`WhatsApp media ${mediaId} is over ${maxBytes} bytes`)
    const file = await fetch(info.url, { headers: auth, signal: AbortSignal.timeout(60_000) })
    if (!file.ok) throw new Error(`WhatsApp media ${mediaId}: download HTTP ${file.status}`)
    const bytes = new Uint8Array(await file.arrayBuffer())
    if (bytes.length > maxBytes) throw new Error(`WhatsApp media ${mediaId} is over ${maxBytes} bytes`)
    return { bytes, mime: info.mime_type ?? file.headers.get('content-type') ?? 'application/octet-stream' }
  }

  /** The GET handshake: the challenge to echo, or null when the token does not match. */
  verifySubscription(query: Record<string, string | undefined>): string | null {
    if (query['hub.mode'] !== 'subscribe' || !query['hub.challenge']) return null
    const given = Buffer.from(query['hub.verify_token'] ?? '')
    const want = Buffer.from(this.config.verifyToken)
    return given.length === want.length && timingSafeEqual(given, want) ? query['hub.challenge'] : null
  }

  /** `X-Hub-Signature-256` over the raw body. */
  verifySignature(raw: string, header: string | null): boolean {
    if (!header?.startsWith('sha256=')) return false
    const want = Buffer.from(`sha256=${createHmac('sha256', this.config.appSecret).update(raw).digest('hex')}`)
    const given = Buffer.from(header)
    return given.length === want.length && timingSafeEqual(given, want)
  }

  /** A verified notification: its inbound messages (text, button replies, media) and its receipts, which go to the listeners. */
  async notification(raw: string): Promise<InboundChat[]> {
    const body = JSON.parse(raw) as { entry?: { changes?: { field?: string; value?: WhatsAppValue }[] }[] }
    const inbound: InboundChat[] = []
    for (const entry of body.entry ?? []) {
      for (const change of entry.changes ?? []) {
        const v = change.value
        if (change.field !== 'messages' || !v) continue
        const to = e164(v.metadata?.display_phone_number ?? '')
        const names = new Map((v.contacts ?? []).map((c) => [c.wa_id, c.profile?.name ?? null]))
        for (const m of v.messages ?? []) {
          const media = mediaOf(m)
          const text =
            m.type === 'text'
              ? (m.text?.body ?? '')
              : m.type === 'button'
                ? (m.button?.text ?? '')
                : m.type === 'interactive'
                  ? (m.interactive?.button_reply?.title ?? m.interactive?.list_reply?.title ?? '')
                  : media
                    ? (media.caption ?? '')
                    : `[${m.type}]`
          inbound.push({
            to,
            phoneNumberId: v.metadata?.phone_number_id ?? '',
            from: e164(m.from),
            platformMessageId: m.id,
            at: Number(m.timestamp) * 1000,
            text,
            name: names.get(m.from) ?? null,
            media,
          })
        }
        for (const st of v.statuses ?? []) {
          const receipt: Receipt = {
            platformMessageId: st.id,
            status: st.status,
            at: Number(st.timestamp) * 1000,
            ...(st.errors?.[0] ? { error: { code: String(st.errors[0].code), message: st.errors[0].title ?? st.errors[0].message ?? '' } } : {}),
            ...(st.biz_opaque_callback_data ? { ref: st.biz_opaque_callback_data } : {}),
          }
          for (const l of this.listeners) await l(receipt)
        }
      }
    }
    return inbound
  }
}

type MediaMessage = { id: string; mime_type?: string; caption?: string; filename?: string }

/** A media message's `type`, which also names the member carrying it, as our media type. */
const MEDIA_KINDS = { image: 'image', video: 'video', audio: 'audio', voice: 'audio', document: 'file', sticker: 'image' } as const satisfies Record<string, InboundMedia['type']>
type MediaKind = keyof typeof MEDIA_KINDS
const isMediaKind = (type: string): type is MediaKind => Object.hasOwn(MEDIA_KINDS, type)

function mediaOf(m: NonNullable<WhatsAppValue['messages']>[number]): InboundMedia | null {
  if (!isMediaKind(m.type)) return null
  const type = MEDIA_KINDS[m.type]
  const body = m[m.type]
  if (!body?.id) return null
  return { mediaId: body.id, type, mime: body.mime_type ?? 'application/octet-stream', caption: body.caption ?? null, name: body.filename ?? null }
}

interface WhatsAppValue {
  metadata?: { display_phone_number?: string; phone_number_id?: string }
  contacts?: { wa_id: string; profile?: { name?: string } }[]
  messages?: ({
    from: string
    id: string
    timestamp: string
    type: string
    text?: { body?: string }
    button?: { text?: string }
    interactive?: { button_reply?: { title?: string }; list_reply?: { title?: string } }
  } & { [K in MediaKind]?: MediaMessage })[]
  statuses?: {
    id: string
    status: Receipt['status']
    timestamp: string
    recipient_id?: string
    errors?: { code: number; title?: string; message?: string }[]
    /** What the message was sent with (SendRequest.ref). */
    biz_opaque_callback_data?: string
  }[]
}
