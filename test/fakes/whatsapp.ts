/**
 * A local WhatsApp Cloud API (Graph API) for the adapter: `POST /{version}/{phone-number-id}/messages`
 * with `Authorization: Bearer`, answering `{ messaging_product, contacts, messages: [{ id }] }` or
 * Graph's error body `{ error: { message, type, code, error_subcode, fbtrace_id } }`; and a way to
 * send the service webhooks signed as Meta signs them (`X-Hub-Signature-256`).
 */
import { createHmac } from 'node:crypto'

export interface WhatsAppFake {
  url: string
  sent: { phoneNumberId: string; version: string; body: any }[]
  /** Recipients (digits) Graph refuses, as for a number not on WhatsApp (131026). */
  refuse: Set<string>
  /** Media customers "sent": id → bytes and type (served as Graph serves media). */
  media: Map<string, { bytes: Uint8Array; mime: string }>
  stop(): void
}

export function startWhatsAppFake(token: string): WhatsAppFake {
  const fake: WhatsAppFake = { url: '', sent: [], refuse: new Set(), media: new Map(), stop: () => server.stop(true) }
  let n = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const authorised = req.headers.get('authorization') === `Bearer ${token}`
      // Media: GET /{version}/{media-id} → its (short-lived) URL; GET that URL with the token → the bytes.
      const meta = /^\/(v\d+\.\d+)\/(media\w+)$/.exec(path)
      if (meta && req.method === 'GET') {
        const file = fake.media.get(meta[2]!)
        if (!authorised) return Response.json({ error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 } }, { status: 401 })
        if (!file) return Response.json({ error: { message: 'Unsupported get request.', type: 'GraphMethodException', code: 100 } }, { status: 400 })
        return Response.json({ messaging_product: 'whatsapp', url: `${fake.url}/download/${meta[2]}`, mime_type: file.mime, sha256: 'x', file_size: file.bytes.length, id: meta[2] })
      }
      const download = /^\/download\/(media\w+)$/.exec(path)
      if (download) {
        const file = fake.media.get(download[1]!)
        if (!authorised || !file) return new Response('no', { status: authorised ? 404 : 401 })
        return new Response(new Blob([new Uint8Array(file.bytes)]), { headers: { 'content-type': file.mime } })
      }
      const m = /^\/(v\d+\.\d+)\/(\d+)\/messages$/.exec(path)
      if (!m || req.method !== 'POST') return Response.json({ error: { message: 'Unsupported request', type: 'GraphMethodException', code: 100 } }, { status: 400 })
      if (req.headers.get('authorization') !== `Bearer ${token}`)
        return Response.json({ error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190, fbtrace_id: 'Afake' } }, { status: 401 })
      const body = await req.json()
      if (fake.refuse.has(body.to)) return Response.json({ error: { message: 'Message Undeliverable.', type: 'OAuthException', code: 131026, fbtrace_id: 'Afake' } }, { status: 400 })
      fake.sent.push({ version: m[1]!, phoneNumberId: m[2]!, body })
      return Response.json({ messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.FAKE${++n}` }] })
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}

/** The service's settings for the WhatsApp Cloud API pointed at `fake` (docs/api/messaging.md). */
export function whatsAppEnv(fake: WhatsAppFake, o: { token: string; appSecret: string; verifyToken: string; phoneNumberIds: Record<string, string> }): Record<string, string> {
  return {
    CHATAPP_PROVIDER: 'whatsapp',
    WHATSAPP_ACCESS_TOKEN: o.token,
    WHATSAPP_APP_SECRET: o.appSecret,
    WHATSAPP_VERIFY_TOKEN: o.verifyToken,
    WHATSAPP_API_BASE_URL: fake.url,
    WHATSAPP_PHONE_NUMBER_IDS: Object.entries(o.phoneNumberIds)
      .map(([number, id]) => `${number}=${id}`)
      .join(','),
  }
}

/** A webhook notification as Meta sends it, and its signature under the app secret. */
export function whatsAppNotification(appSecret: string, value: Record<string, unknown>): { raw: string; signature: string } {
  const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', ...value } }] }] })
  return { raw, signature: `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}` }
}
