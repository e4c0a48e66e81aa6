/**
 * WhatsApp's webhook (set as the app's callback URL: `$PUBLIC_BASE_URL/messaging/whatsapp/webhook`):
 * `GET` answers Meta's verification handshake; `POST` checks `X-Hub-Signature-256` over the raw
 * body (403 otherwise), hands receipts to the platform's listeners and each inbound message to the
 * inbound path of the number's workspace, and answers 200 at once (Meta retries slow or failed
 * webhooks and eventually disables them; a message for a number we do not hold is acknowledged and
 * dropped, as retrying it would never help).
 */
import { Elysia } from 'elysia'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import type { InboundChat, WhatsAppPlatform } from '../../providers/messaging/whatsapp'
import type { PhoneNumberService } from '../phone-numbers/public'
import { MAX_FILE_BYTES, type ReceivedFiles } from './files'
import type { InboundMessages } from './inbound'

export function whatsAppWebhook(deps: {
  platform: WhatsAppPlatform
  inbound: InboundMessages
  numbers: PhoneNumberService
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  learn: (number: string, phoneNumberId: string) => Promise<void>
  files: ReceivedFiles
  logger: Logger
}) {
  return new Elysia({ prefix: '/messaging/whatsapp' })
    .get(
      '/webhook',
      ({ query, set }) => {
        const challenge = deps.platform.verifySubscription(query as Record<string, string | undefined>)
        set.headers['content-type'] = 'text/plain'
        if (challenge === null) {
          set.status = 403
          return 'verify token does not match'
        }
        return challenge
      },
      { detail: { hide: true } },
    )
    .post(
      '/webhook',
      async ({ request, body, set }) => {
        const raw = typeof body === 'string' ? body : await request.text()
        if (!deps.platform.verifySignature(raw, request.headers.get('x-hub-signature-256'))) {
          set.status = 403
          return { error: 'X-Hub-Signature-256 does not verify' }
        }
        let messages: InboundChat[]
        try {
          messages = await deps.platform.notification(raw)
        } catch (err) {
          set.status = 400
          return { error: `not a WhatsApp notification: ${(err as Error).message}` }
        }
        for (const m of messages) {
          const number = await deps.numbers.byNumber(m.to)
          const workspace = number ? await deps.workspace(number.workspaceId) : null
          if (!number || !workspace) {
            deps.logger.warn({ to: m.to }, 'a WhatsApp message for a number we do not hold was dropped')
            continue
          }
          await deps.learn(m.to, m.phoneNumberId)
          try {
            // A photo or document is fetched now: WhatsApp's own link to it lasts only minutes.
            let media = null
            if (m.media) {
              const file = await deps.platform.download(m.media.mediaId, MAX_FILE_BYTES)
              media = { ref: await deps.files.save(workspace.id, file.bytes, file.mime, m.media.name), type: m.media.type, caption: m.media.caption, name: m.media.name }
            }
            await deps.inbound.receive(workspace, { channel: 'chatapp', from: m.from, to: m.to, text: m.text, media })
          } catch (err) {
            deps.logger.warn({ err, to: m.to }, 'a WhatsApp message could not be taken in')
          }
        }
        return { ok: true }
      },
      { detail: { hide: true } },
    )
}
