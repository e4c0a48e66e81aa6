/**
 * A local Telegram Bot API: `POST /bot{token}/{method}` with a JSON body answering
 * `{ ok: true, result }` or `{ ok: false, error_code, description }` (401 Unauthorized for an unknown
 * token, 403 "bot was blocked by the user", 400 "chat not found"), `getFile` and
 * `GET /file/bot{token}/{file_path}` for media; and `deliver`, which posts an Update to the webhook a
 * bot set, with `X-Telegram-Bot-Api-Secret-Token`, as Telegram does.
 */
export interface TelegramFake {
  url: string
  /** token → the bot it belongs to. */
  bots: Map<string, { id: number; username: string; first_name: string }>
  webhooks: Map<number, { url: string; secret: string | null } | null>
  sent: { bot: number; method: string; body: any }[]
  /** Chat ids that blocked the bot. */
  blocked: Set<number>
  files: Map<string, { bytes: Uint8Array; mime: string }>
  deliver(botId: number, update: Record<string, unknown>, secret?: string | null): Promise<Response>
  stop(): void
}

const fail = (error_code: number, description: string) => Response.json({ ok: false, error_code, description }, { status: error_code })

export function startTelegramFake(): TelegramFake {
  let messageId = 100
  const fake: TelegramFake = {
    url: '',
    bots: new Map(),
    webhooks: new Map(),
    sent: [],
    blocked: new Set(),
    files: new Map(),
    async deliver(botId, update, secret) {
      const hook = fake.webhooks.get(botId)
      if (!hook) throw new Error(`bot ${botId} has no webhook`)
      const given = secret === undefined ? hook.secret : secret
      return fetch(hook.url, { method: 'POST', headers: { 'content-type': 'application/json', ...(given ? { 'x-telegram-bot-api-secret-token': given } : {}) }, body: JSON.stringify(update) })
    },
    stop: () => server.stop(true),
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(path)
      if (file && req.method === 'GET') {
        const f = fake.bots.has(decodeURIComponent(file[1]!)) ? fake.files.get(file[2]!) : undefined
        return f ? new Response(new Blob([new Uint8Array(f.bytes)]), { headers: { 'content-type': f.mime } }) : new Response('Not Found', { status: 404 })
      }
      const m = /^\/bot([^/]+)\/(\w+)$/.exec(path)
      if (!m) return fail(404, 'Not Found')
      const bot = fake.bots.get(decodeURIComponent(m[1]!))
      if (!bot) return fail(401, 'Unauthorized')
      const method = m[2]!
      const body = (await req.json().catch(() => ({}))) as any
      if (method === 'getMe') return Response.json({ ok: true, result: { id: bot.id, is_bot: true, first_name: bot.first_name, username: bot.username, can_join_groups: true } })
      if (method === 'setWebhook') {
        if (typeof body.url !== 'string' || !body.url) return fail(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook')
        if (body.secret_token !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(body.secret_token)) return fail(400, 'Bad Request: secret token contains unallowed characters')
        fake.webhooks.set(bot.id, { url: body.url, secret: body.secret_token ?? null })
        return Response.json({ ok: true, result: true, description: 'Webhook was set' })
      }
      if (method === 'deleteWebhook') {
        fake.webhooks.set(bot.id, null)
        return Response.json({ ok: true, result: true, description: 'Webhook was deleted' })
      }
      if (method === 'getFile') {
        const f = fake.files.get(body.file_id)
        if (!f) return fail(400, 'Bad Request: invalid file_id')
        return Response.json({ ok: true, result: { file_id: body.file_id, file_unique_id: `u${body.file_id}`, file_size: f.bytes.length, file_path: body.file_id } })
      }
      const field = { sendMessage: 'text', sendPhoto: 'photo', sendVideo: 'video', sendAudio: 'audio', sendDocument: 'document' }[method]
      if (!field) return fail(404, 'Not Found: method not found')
      if (typeof body.chat_id !== 'number') return fail(400, 'Bad Request: chat not found')
      if (fake.blocked.has(body.chat_id)) return fail(403, 'Forbidden: bot was blocked by the user')
      if (typeof body[field] !== 'string' || !body[field]) return fail(400, `Bad Request: ${field === 'text' ? 'message text is empty' : 'wrong file identifier/HTTP URL specified'}`)
      fake.sent.push({ bot: bot.id, method, body })
      return Response.json({
        ok: true,
        result: { message_id: ++messageId, date: Math.floor(Date.now() / 1000), chat: { id: body.chat_id, type: 'private' }, from: { id: bot.id, is_bot: true, first_name: bot.first_name } },
      })
    },
  })
  fake.url = `http://127.0.0.1:${server.port}`
  return fake
}

/** A private-chat text Update as Telegram sends it. */
export function textUpdate(updateId: number, chatId: number, text: string, name = 'Asha') {
  return {
    update_id: updateId,
    message: { message_id: updateId, date: 1732400000, chat: { id: chatId, first_name: name, type: 'private' }, from: { id: chatId, is_bot: false, first_name: name, language_code: 'en' }, text },
  }
}
