/**
 * Telnyx's webhooks for calls (`POST /telephony/telnyx/events`, the `webhook_url` of every call we
 * place and of the Call Control application, for incoming calls): JSON, signed with Ed25519 over
 * the raw body (telnyx-signature.ts). The body is read raw and bounded like every vendor callback
 * (src/http/body-limits.ts); a bad or stale signature is refused 403 before anything is parsed.
 */
import { Elysia } from 'elysia'
import type { Clock } from '../../../clock'
import { TELNYX_WEBHOOK_PATH, type TelnyxIncoming, type TelnyxTelephony } from '../../../providers/telephony/telnyx'

export function telnyxCallbacks(deps: { telnyx: TelnyxTelephony; clock: Clock; answer: TelnyxIncoming }) {
  return new Elysia().post(
    TELNYX_WEBHOOK_PATH,
    async ({ request, body, set }) => {
      const raw = typeof body === 'string' ? body : await request.text()
      const refused = await deps.telnyx.webhook(raw, request.headers.get('telnyx-signature-ed25519'), request.headers.get('telnyx-timestamp'), deps.clock.now(), deps.answer)
      if (refused) {
        set.status = 403
        return { error: refused.refused }
      }
      set.status = 204
      return null
    },
    { detail: { hide: true } },
  )
}
