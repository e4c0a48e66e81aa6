/**
 * How large a request body may be, per surface (docs/production.md "Request bodies"). Each limit is
 * checked while the body arrives, before any signature or parsing work: a declared length over it
 * is refused at once without reading a byte, a chunked body as soon as it runs past it (413 in the
 * surface's error shape, json-body.ts).
 */
import { isVisitorPath } from './surface'

/**
 * The API (v1, console, legacy). The largest legitimate body is pasted knowledge: 200,000
 * characters (docs/spec.md Limits), at most ~1.6 MB as escaped UTF-8 JSON; 2 MiB covers it.
 */
export const MAX_BODY_BYTES = 2 * 1024 * 1024

/**
 * The website widget's visitor API (`/api/v1/web/…`, no key). Its largest body is a message: 4,000
 * characters (docs/spec.md Limits, the web feature's WEB_MESSAGE_MAX), at most 24,000 bytes even
 * if every character is sent as a 6-byte `\uXXXX` escape, plus a session id of at most 100.
 * 64 KiB is over twice that.
 */
export const VISITOR_MAX_BODY_BYTES = 64 * 1024

/**
 * Twilio's callbacks (`/telephony/twilio/…`): form posts of a few dozen parameters, each a SID, a
 * number, a status or a place name; a voice webhook or status callback is 1–2 KB, and a <Gather>'s
 * SpeechResult a few hundred characters more. Twilio "will occasionally add new parameters without
 * advance notice" (its webhook request docs), so 64 KiB leaves thirty times the room they use.
 * Telnyx's Call Control webhooks are JSON of one event's payload, 1–3 KB: the same bound holds.
 */
export const TELEPHONY_CALLBACK_MAX_BYTES = 64 * 1024

/**
 * WhatsApp Cloud API notifications (`/messaging/whatsapp/…`): Meta's webhooks documentation gives
 * 3 MB as the largest payload it sends (a batch of changes; a single text message is ~1 KB).
 */
export const WHATSAPP_CALLBACK_MAX_BYTES = 3 * 1024 * 1024

/**
 * Telegram updates (`/messaging/telegram/…`): one Update, whose message has at most 4,096
 * characters of text (Bot API) and may quote the message it replies to, each at most 24 KB as
 * escaped JSON with its entities; 256 KiB is several times both together.
 */
export const TELEGRAM_CALLBACK_MAX_BYTES = 256 * 1024

/** Vendor callbacks at the root (their routes read the raw text and check the vendor's signature). */
export const VENDOR_CALLBACKS_PREFIX = '/telephony/'
export const VENDOR_CALLBACK_PREFIXES = [VENDOR_CALLBACKS_PREFIX, '/messaging/'] as const

export const isVendorCallback = (path: string): boolean => VENDOR_CALLBACK_PREFIXES.some((p) => path.startsWith(p))

/** The most bytes a body sent to `path` may have. */
export function bodyLimitOf(path: string): number {
  if (path.startsWith(VENDOR_CALLBACKS_PREFIX)) return TELEPHONY_CALLBACK_MAX_BYTES
  if (path.startsWith('/messaging/whatsapp/')) return WHATSAPP_CALLBACK_MAX_BYTES
  if (path.startsWith('/messaging/telegram/')) return TELEGRAM_CALLBACK_MAX_BYTES
  // Another messaging platform's callback gets the smallest limit until it is given its own.
  if (isVendorCallback(path)) return TELEPHONY_CALLBACK_MAX_BYTES
  if (isVisitorPath(path)) return VISITOR_MAX_BODY_BYTES
  return MAX_BODY_BYTES
}

/** A limit in words: "64 KiB", "2 MiB". */
export const sizeInWords = (bytes: number): string => (bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`)
