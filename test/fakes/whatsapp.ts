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
  stop(): void
}

export function startWhatsAppFake(token: string): WhatsAppFake {
  const fake: WhatsAppFake = { url: '', sent: [], refuse: new Set(), stop: () => server.stop(true) }
  let n = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const m = /^\/(v\d+\.\d+)\/(\d+)\/messages$/.exec(new URL(req.url).pathname)
      if (!m || req.method !== 'POST') return Response.json({ error: { message: 'Unsupported request', type: 'GraphMethodException', code: 100 } }, { status: 400 })
      if (req.headers.get('authorization') !== `Bearer ${token}`) return Response.json({ error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190, fbtrace_id: 'Afake' } }, { status: 401 })
      const body = await req.json()
      if (fake.refuse.has(body.to)) return Response.json({ error: { message: 'Message Undeliverable.', type: 'OAuthException', code: 131026, fbtrace_id: 'Afake' } }, { status: 400 })
      fake.sent.push({ version: m[1]!, phoneNumberId: m[2]!, body })
      return Response.json({ messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.FAKE${++n}` }] })
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}

/** A webhook notification as Meta sends it, and its signature under the app secret. */
export function whatsAppNotification(appSecret: string, value: Record<string, unknown>): { raw: string; signature: string } {
  const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', ...value } }] }] })
  return { raw, signature: `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}` }
}
