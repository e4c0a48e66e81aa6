/**
 * The `botapp` channel as the Telegram Bot API (https://core.telegram.org/bots/api): every method is
 * `POST {base}/bot{token}/{method}` with a JSON body, answered `{ ok: true, result }` or
 * `{ ok: false, error_code, description, parameters? }`. We use `getMe` (a token is checked before it
 * is kept), `setWebhook` with a `secret_token` that Telegram echoes in
 * `X-Telegram-Bot-Api-Secret-Token` on every update, `deleteWebhook`, `sendMessage`,
 * `sendPhoto`/`sendVideo`/`sendAudio`/`sendDocument` by URL, and `getFile` + `{base}/file/bot{token}/{path}`
 * for media a customer sends. Telegram has no delivery receipts: a send it accepts is `sent`.
 * The base URL is configurable so tests point it at a local fake.
 */
import { timingSafeEqual } from 'node:crypto'
import { type MessagingPlatform, type OutboundContent, PlatformRefused, type Receipt, type SendRequest, type Sent } from './port'

/** Telegram answers a method in well under a second; 10 s bounds a stalled one (the send fails). */
export const CALL_TIMEOUT_MS = 10_000
/** The Bot API's own ceiling for `getFile` downloads (core.telegram.org/bots/api#getfile: 20 MB). */
export const TELEGRAM_FILE_LIMIT = 20 * 1024 * 1024
/** A bot token as BotFather issues it: the bot's numeric id, a colon, 35 characters of secret. */
export const TOKEN_SHAPE = /^(\d{3,20}):[A-Za-z0-9_-]{30,64}$/

export class TelegramError extends Error {
  override readonly name = 'TelegramError'
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message)
  }
}

export interface BotIdentity {
  id: string
  username: string
  name: string
}

export interface InboundBotMessage {
  chatId: string
  platformMessageId: string
  at: number
  text: string
  /** The sender's name as Telegram shows it. */
  name: string | null
  /** A phone number the customer shared with the "share contact" button (their own). */
  phone: string | null
  media: { fileId: string; type: 'image' | 'video' | 'audio' | 'file'; caption: string | null; name: string | null } | null
}

/** One bot's API, by its token. */
export class TelegramBotApi {
  constructor(
    private readonly token: string,
    private readonly baseUrl: string,
  ) {}

  async call<T>(method: string, params: Record<string, unknown>): Promise<T> {
    let res: Response
    try {
      res = await fetch(`${this.base()}/bot${this.token}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(params),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      })
    } catch (err) {
      throw new TelegramError(`Telegram could not be reached: ${this.redact((err as Error).message)}`, 'unreachable', 0)
    }
    const body = (await res.json().catch(() => null)) as { ok?: boolean; result?: T; error_code?: number; description?: string } | null
    if (!body?.ok) throw new TelegramError(`Telegram ${method}: ${this.redact(body?.description ?? `HTTP ${res.status}`)}`, String(body?.error_code ?? res.status), res.status)
    return body.result as T
  }

  async getMe(): Promise<BotIdentity> {
    const me = await this.call<{ id: number; is_bot: boolean; first_name: string; username?: string }>('getMe', {})
    return { id: String(me.id), username: me.username ?? '', name: me.first_name }
  }

  setWebhook(url: string, secret: string): Promise<boolean> {
    return this.call('setWebhook', { url, secret_token: secret, allowed_updates: ['message'] })
  }

  deleteWebhook(): Promise<boolean> {
    return this.call('deleteWebhook', {})
  }

  async send(chatId: string, content: OutboundContent): Promise<string> {
    const [method, params] = telegramSend(chatId, content)
    const message = await this.call<{ message_id: number }>(method, params)
    return String(message.message_id)
  }

  async download(fileId: string, maxBytes: number): Promise<{ bytes: Uint8Array; mime: string }> {
    const file = await this.call<{ file_path?: string; file_size?: number }>('getFile', { file_id: fileId })
    if (!file.file_path) throw new TelegramError(`Telegram file ${fileId} has no path (over ${TELEGRAM_FILE_LIMIT} bytes?)`, 'no_path', 400)
    if ((file.file_size ?? 0) > maxBytes) throw new TelegramError(`Telegram file ${fileId} is over ${maxBytes} bytes`, 'too_large', 400)
    const res = await fetch(`${this.base()}/file/bot${this.token}/${file.file_path}`, { signal: AbortSignal.timeout(60_000) })
    if (!res.ok) throw new TelegramError(`Telegram file ${fileId}: download HTTP ${res.status}`, String(res.status), res.status)
    const bytes = new Uint8Array(await res.arrayBuffer())
    if (bytes.length > maxBytes) throw new TelegramError(`Telegram file ${fileId} is over ${maxBytes} bytes`, 'too_large', 400)
    return { bytes, mime: res.headers.get('content-type') ?? 'application/octet-stream' }
  }

  private base(): string {
    return this.baseUrl.replace(/\/$/, '')
  }

  /** The token is in every URL: it never reaches an error message or a log. */
  private redact(text: string): string {
    return text.split(this.token).join('***')
  }
}

/** The Bot API method and body for one outbound message. Templates and forms are WhatsApp's, not Telegram's. */
export function telegramSend(chatId: string, content: OutboundContent): [string, Record<string, unknown>] {
  const chat_id = /^-?\d+$/.test(chatId) ? Number(chatId) : chatId
  if (content.type === 'text') return ['sendMessage', { chat_id, text: content.text }]
  if (content.type === 'media') {
    const m = content.media
    const [method, field] = m.type === 'image' ? ['sendPhoto', 'photo'] : m.type === 'video' ? ['sendVideo', 'video'] : m.type === 'audio' ? ['sendAudio', 'audio'] : ['sendDocument', 'document']
    return [method, { chat_id, [field]: m.url, ...(m.caption !== undefined ? { caption: m.caption } : {}) }]
  }
  throw new PlatformRefused(`Telegram has no ${content.type}s: send text or media`, 'unsupported')
}

/** An Update's `message` as an inbound message, or null for updates we do not take (edits, joins…). */
export function inboundOf(update: TelegramUpdate): InboundBotMessage | null {
  const m = update.message
  if (m?.chat?.type !== 'private') return null
  const photo = m.photo?.length ? m.photo[m.photo.length - 1] : undefined // the largest size comes last
  const media: InboundBotMessage['media'] = photo
    ? { fileId: photo.file_id, type: 'image', caption: m.caption ?? null, name: null }
    : m.video
      ? { fileId: m.video.file_id, type: 'video', caption: m.caption ?? null, name: m.video.file_name ?? null }
      : m.voice || m.audio
        ? { fileId: (m.voice ?? m.audio)!.file_id, type: 'audio', caption: m.caption ?? null, name: m.audio?.file_name ?? null }
        : m.document
          ? { fileId: m.document.file_id, type: 'file', caption: m.caption ?? null, name: m.document.file_name ?? null }
          : null
  const own = m.contact && m.from && m.contact.user_id === m.from.id ? m.contact.phone_number : null
  const text = m.text ?? m.caption ?? (m.contact ? '[contact shared]' : media ? '' : '[unsupported message]')
  const name = [m.from?.first_name, m.from?.last_name].filter(Boolean).join(' ') || null
  return { chatId: String(m.chat.id), platformMessageId: String(m.message_id), at: m.date * 1000, text, name, phone: own ? (own.startsWith('+') ? own : `+${own}`) : null, media }
}

/** Telegram's `X-Telegram-Bot-Api-Secret-Token` against the secret we set with the webhook. */
export function secretMatches(given: string | null, want: string): boolean {
  const a = Buffer.from(given ?? '')
  const b = Buffer.from(want)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The messaging port over many bots: `from` is the bot's id, `to` the chat id; the token of each
 * bot comes from the connections kept (sealed) by the messaging feature.
 */
export class TelegramPlatform implements MessagingPlatform {
  readonly name = 'telegram'

  constructor(
    private readonly baseUrl: string,
    private readonly tokenOf: (botId: string) => Promise<string | null>,
  ) {}

  api(token: string): TelegramBotApi {
    return new TelegramBotApi(token, this.baseUrl)
  }

  async send(request: SendRequest): Promise<Sent> {
    const token = await this.tokenOf(request.from)
    if (!token) throw new PlatformRefused(`bot ${request.from} is not connected`, 'not_connected')
    try {
      return { platformMessageId: await this.api(token).send(request.to, request.content) }
    } catch (err) {
      if (err instanceof TelegramError) throw new PlatformRefused(err.message, err.code)
      throw err
    }
  }

  /** Telegram reports no delivery: listeners are never called. */
  onReceipt(_listener: (receipt: Receipt) => Promise<void> | void): void {}
}

type FileRef = { file_id: string; file_name?: string; file_size?: number }

export interface TelegramUpdate {
  update_id: number
  message?: {
    message_id: number
    date: number
    chat: { id: number; type: string }
    from?: { id: number; is_bot?: boolean; first_name?: string; last_name?: string; username?: string }
    text?: string
    caption?: string
    photo?: FileRef[]
    video?: FileRef
    voice?: FileRef
    audio?: FileRef
    document?: FileRef
    contact?: { phone_number: string; first_name?: string; user_id?: number }
  }
}
