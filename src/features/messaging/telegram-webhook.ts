/**
 * Telegram's webhook, one URL per bot (`$PUBLIC_BASE_URL/messaging/telegram/webhook/{botId}`, set by
 * `setWebhook` when the bot is connected): an update whose `X-Telegram-Bot-Api-Secret-Token` is not
 * the bot's secret is refused 403; a good one answers 200 once its message is stored (Telegram
 * retries non-2xx answers, so an update we cannot use — an edit, a group message, an unknown bot — is
 * acknowledged and dropped, as a retry would never help). Media is fetched at once with `getFile`.
 */
import { Elysia, t } from 'elysia'
import type { WorkspaceDoc } from '../../kernel/tenancy'
import type { Logger } from '../../logger'
import { inboundOf, secretMatches, TELEGRAM_FILE_LIMIT, type TelegramPlatform, type TelegramUpdate } from '../../providers/messaging/telegram'
import type { BotInbound } from './botapp'
import type { BotConnections } from './bots'
import { MAX_FILE_BYTES, type ReceivedFiles } from './files'

export function telegramWebhook(deps: {
  platform: TelegramPlatform
  bots: BotConnections
  inbound: BotInbound
  workspace: (id: string) => Promise<WorkspaceDoc | null>
  files: ReceivedFiles
  logger: Logger
}) {
  return new Elysia({ prefix: '/messaging/telegram' }).post(
    '/webhook/:bot',
    async ({ params, request, body, set }) => {
      // Vendor callbacks arrive as raw text (http/json-body.ts), parsed here once the sender is known.
      const bot = await deps.bots.byId(params.bot)
      if (!bot || !secretMatches(request.headers.get('x-telegram-bot-api-secret-token'), deps.bots.secretOf(bot))) {
        set.status = 403
        return { error: 'X-Telegram-Bot-Api-Secret-Token does not match this bot' }
      }
      const message = inboundOf(parse(typeof body === 'string' ? body : await request.text()))
      const workspace = message ? await deps.workspace(bot.workspaceId) : null
      if (!message || !workspace) return { ok: true }
      try {
        let media = null
        if (message.media) {
          const token = await deps.bots.tokenOf(bot.id)
          const file = await deps.platform.api(token!).download(message.media.fileId, Math.min(MAX_FILE_BYTES, TELEGRAM_FILE_LIMIT))
          media = { ref: await deps.files.save(workspace.id, file.bytes, file.mime, message.media.name), type: message.media.type, caption: message.media.caption, name: message.media.name }
        }
        await deps.inbound.receive(workspace, { from: message.chatId, to: bot.id, text: message.text, media })
      } catch (err) {
        deps.logger.warn({ err, bot: bot.id }, 'a Telegram message could not be taken in')
      }
      return { ok: true }
    },
    { params: t.Object({ bot: t.String() }), detail: { hide: true } },
  )
}

function parse(raw: string): TelegramUpdate {
  try {
    const update = JSON.parse(raw) as unknown
    return update && typeof update === 'object' ? (update as TelegramUpdate) : { update_id: 0 }
  } catch {
    return { update_id: 0 }
  }
}
