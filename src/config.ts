/**
 * Environment → typed config. A bad value stops boot with a message naming the variable,
 * so an operator never runs a half-configured service.
 */
import { resolve } from 'node:path'
import { DEFAULT_INSPECTOR_PORT } from '../actors/inspection'
import { ConfigError, type Env, flag, llmBaseUrl, oneOf, optional, url } from './config-values'

export { ConfigError } from './config-values'

export interface Config {
  port: number
  host: string
  /** REUSE_PORT: several processes may listen on PORT together (SO_REUSEPORT); off, a taken PORT stops boot. */
  reusePort: boolean
  dataDir: string
  mongodbUrl?: string
  redisUrl?: string
  consoleToken?: string
  publicBaseUrl: string
  /** Where the sandbox network's callees open their media streams (SANDBOX_MEDIA_URL; unset: this process). */
  sandboxMediaUrl?: string
  secretKey?: string
  clock: 'system' | 'manual'
  telephonyProvider: 'sandbox' | 'twilio' | 'telnyx'
  allowPrivateWebhookTargets: boolean
  /** `smtp://user:pass@host:port` (or smtps://): email webhooks and notifications go through it. */
  smtpUrl?: string
  /** The From of those emails: an address, or `Name <address>`. */
  smtpFrom: string
  /** Inbound mail: an SMTP listener on HOST at this port (unset: none; 0 picks a free port). */
  smtpListenPort?: number
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** `exclusive`: one process owns the embedded store (fastest); `shared`: several processes on one machine. */
  sqliteLocking: 'exclusive' | 'shared'
  inspect: boolean
  /** WebSocket URL of a running Stately inspector relay; without it INSPECT=1 starts one. */
  inspectUrl?: string
  /** The port of the relay INSPECT=1 starts (INSPECT_PORT). */
  inspectPort: number
  providers: {
    openaiApiKey?: string
    /** The OpenAI-protocol server the service's own OpenAI models go to (default OpenAI's). */
    openaiBaseUrl?: string
    anthropicApiKey?: string
    /** Anthropic's API (default https://api.anthropic.com); a local fake in tests. */
    anthropicBaseUrl?: string
    deepgramApiKey?: string
    elevenlabsApiKey?: string
    twilioAccountSid?: string
    twilioAuthToken?: string
    /** Twilio's REST API (default https://api.twilio.com); a local fake in tests. */
    twilioApiBaseUrl?: string
    telnyxApiKey?: string
    /** The Call Control application calls are placed on (Telnyx's `connection_id`). */
    telnyxConnectionId?: string
    /** The account's Ed25519 public key (base64): Telnyx's webhooks are verified with it. */
    telnyxPublicKey?: string
    /** Telnyx's API (default https://api.telnyx.com); a local fake in tests. */
    telnyxApiBaseUrl?: string
    deepgramBaseUrl?: string
    elevenlabsBaseUrl?: string
    cartesiaApiKey?: string
    /** Cartesia's API (default https://api.cartesia.ai; its TTS socket is the same host over wss); a local fake in tests. */
    cartesiaBaseUrl?: string
    assemblyaiApiKey?: string
    /** AssemblyAI's streaming host (default wss://streaming.assemblyai.com); a local fake in tests. */
    assemblyaiBaseUrl?: string
  }
  /** The chat-app platform: the sandbox (default) or the WhatsApp Cloud API. */
  chatapp: {
    provider: 'sandbox' | 'whatsapp'
    whatsapp?: { accessToken: string; appSecret: string; verifyToken: string; baseUrl: string; version: string; phoneNumberIds: Record<string, string> }
  }
  /** Campaign sends a second per platform number (CAMPAIGN_SEND_RATE; unset: 80 on WhatsApp, unpaced on the sandbox; 0: unpaced). */
  campaignSendRate?: number
  /** The `botapp` platform: the sandbox (default) or the Telegram Bot API at `telegramApiUrl`. */
  botapp: { provider: 'sandbox' | 'telegram'; telegramApiUrl: string }
  /** After SIGTERM, how long live calls may go on before they are ended with a goodbye (DRAIN_SECONDS). */
  drainSeconds: number
  /** How long an HTTP connection may stay silent before it is closed (HTTP_IDLE_SECONDS). */
  httpIdleSeconds: number
  /** Refused credentials a minute one client address may send before it gets 429s (AUTH_FAILURES_PER_MINUTE; 0: no brake). */
  authFailuresPerMinute: number
  /** New visitor sessions a minute one client address may start on one widget (VISITOR_SESSIONS_PER_MINUTE; 0: no limit). */
  visitorSessionsPerMinute: number
  /** Admission control (docs/production.md "Capacity"): calls this instance takes at most (CALLS_MAX_LIVE), resident memory it stops at (CALLS_MAX_RSS_MB; undefined: 80% of what it may use). */
  admission: { maxCalls: number; maxRssMb?: number; maxLoopLagMs: number; minPlayoutLeadMs: number }
  /** Voice pipeline engines (docs/api/voice.md): `auto` resolves keys → local engines → the sandbox doubles. */
  speech: {
    stt: 'auto' | 'deepgram' | 'assemblyai' | 'deepgram-flux' | 'openai' | 'pocketsphinx' | 'sandbox'
    tts: 'auto' | 'elevenlabs' | 'openai' | 'cartesia' | 'espeak' | 'sandbox'
    vad: 'silero' | 'energy'
    /** Milliseconds of agent audio per paced chunk (each followed by a mark). */
    chunkMs: number
    /** Live pocketsphinx decoders shared by the calls (STT_DECODERS; undefined: two per core). */
    decoders?: number
    /** Utterances that may wait for one (STT_DECODER_QUEUE; undefined: two per decoder). */
    decoderQueue?: number
    /** In-process espeak-ng synthesiser threads shared by the calls (TTS_SYNTHESIZERS; undefined: one per core). */
    synthesizers?: number
  }
}

// An address, or `Display Name <address>`: enough to refuse a value that is plainly not one.
const FROM_PATTERN = /^(?:[^<>]*<\s*[^\s@<>]+@[^\s@<>]+\s*>|[^\s@<>]+@[^\s@<>]+)$/

function smtpFrom(env: Env, publicBaseUrl: string): string {
  const v = optional(env, 'SMTP_FROM')
  if (v === undefined) return `webhooks@${new URL(publicBaseUrl).hostname}`
  if (!FROM_PATTERN.test(v)) throw new ConfigError('SMTP_FROM', `must be an email address or "Name <address>" (got "${v}")`)
  return v
}

function chatappConfig(env: Env): Config['chatapp'] {
  const provider = oneOf(env, 'CHATAPP_PROVIDER', ['sandbox', 'whatsapp'] as const, 'sandbox')
  if (provider === 'sandbox') return { provider }
  const need = (name: string) => {
    const v = optional(env, name)
    if (!v) throw new ConfigError(name, 'is needed with CHATAPP_PROVIDER=whatsapp')
    return v
  }
  // "+14155550100=123456789012345,+…": our numbers and their WhatsApp phone-number ids (the webhook also teaches them).
  const phoneNumberIds: Record<string, string> = {}
  for (const pair of (optional(env, 'WHATSAPP_PHONE_NUMBER_IDS') ?? '').split(',').filter(Boolean)) {
    const [number, id] = pair.split('=').map((x) => x.trim())
    if (!number || !id || !/^\+\d{6,15}$/.test(number) || !/^\d+$/.test(id)) throw new ConfigError('WHATSAPP_PHONE_NUMBER_IDS', `"${pair}" is not +E164=phone-number-id`)
    phoneNumberIds[number] = id
  }
  return {
    provider,
    whatsapp: {
      accessToken: need('WHATSAPP_ACCESS_TOKEN'),
      appSecret: need('WHATSAPP_APP_SECRET'),
      verifyToken: need('WHATSAPP_VERIFY_TOKEN'),
      baseUrl: llmBaseUrl(env, 'WHATSAPP_API_BASE_URL') ?? 'https://graph.facebook.com',
      version: optional(env, 'WHATSAPP_API_VERSION') ?? 'v21.0',
      phoneNumberIds,
    },
  }
}

/** 20–200 ms: Twilio's own frames are 20 ms; past 200 ms a barge-in hears too much after `clear`. */
function mediaChunkMs(env: Env): number {
  const v = optional(env, 'MEDIA_CHUNK_MS')
  if (v === undefined) return 100
  const n = Number(v)
  if (!Number.isInteger(n) || n < 20 || n > 200 || n % 20) throw new ConfigError('MEDIA_CHUNK_MS', 'must be a multiple of 20 from 20 to 200')
  return n
}

/**
 * Calls one instance takes by default: bench:soak on the 2-core reference machine carried 300
 * listening callers with no gap and its event loop half busy (docs/benchmarks.md, soak 2026-11-26);
 * with local speech-to-text and speaking callers the other admission signals refuse far sooner.
 * Each machine should measure its own.
 */
export const DEFAULT_MAX_LIVE_CALLS = 300

/** An optional whole number from `min` to `max`, under `key` when set. */
function optionalCount<K extends string>(env: Env, name: string, min: number, max: number, key: K): Partial<Record<K, number>> {
  const v = optional(env, name)
  if (v === undefined) return {}
  const n = Number(v)
  if (!/^\d+$/.test(v) || n < min || n > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${v}")`)
  return { [key]: n } as Partial<Record<K, number>>
}

/** 0–10,000 a second: 0 is unpaced; past 10,000 no platform takes it and the pacer's timer resolution (1 ms) is the limit anyway. */
function sendRate(env: Env): number | undefined {
  const v = optional(env, 'CAMPAIGN_SEND_RATE')
  if (v === undefined) return undefined
  const n = Number(v)
  if (!/^\d+(\.\d+)?$/.test(v) || n > 10_000) throw new ConfigError('CAMPAIGN_SEND_RATE', `must be a number of sends a second from 0 to 10000 (got "${v}")`)
  return n
}

/**
 * 1–65535, default the inspector package's own (8080). Not 0: the relay's page embeds the port it
 * was given, so it cannot pick a free one. Not PORT, which the API listens on.
 */
function inspectorPort(env: Env, apiPort: number): number {
  const v = optional(env, 'INSPECT_PORT')
  const port = v === undefined ? DEFAULT_INSPECTOR_PORT : Number(v)
  if (v !== undefined && (!/^\d+$/.test(v) || port < 1 || port > 65535)) throw new ConfigError('INSPECT_PORT', `must be a whole number from 1 to 65535 (got "${v}")`)
  if (port === apiPort && flag(env, 'INSPECT') && !optional(env, 'INSPECT_URL')) {
    throw new ConfigError('INSPECT_PORT', `is ${port}, the API's PORT too: the inspector relay needs a port of its own`)
  }
  return port
}

/**
 * 0–3600, default 300: the free plan's default call length (src/catalog/limits.ts), so a call that
 * started just before a deploy and runs to that limit still ends on its own; longer ones hear a
 * goodbye. Past an hour a rolling deploy would take all day. 0 ends live calls at once (politely).
 */
function drainSeconds(env: Env): number {
  const v = optional(env, 'DRAIN_SECONDS')
  if (v === undefined) return DEFAULT_DRAIN_SECONDS
  if (!/^\d+$/.test(v) || Number(v) > 3600) throw new ConfigError('DRAIN_SECONDS', `must be a whole number of seconds from 0 to 3600 (got "${v}")`)
  return Number(v)
}

export const DEFAULT_DRAIN_SECONDS = 300

/**
 * 1–255 (Bun's range), default 30 (Elysia's default for Bun.serve): a keep-alive connection, a
 * client slow to send its headers, or an answer with nothing written yet is closed after this long.
 * Request bodies get longer, by their own deadline (src/http/body-deadline.ts).
 */
function httpIdleSeconds(env: Env): number {
  const v = optional(env, 'HTTP_IDLE_SECONDS')
  if (v === undefined) return DEFAULT_HTTP_IDLE_SECONDS
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 255) throw new ConfigError('HTTP_IDLE_SECONDS', `must be a whole number of seconds from 1 to 255 (got "${v}")`)
  return Number(v)
}

export const DEFAULT_HTTP_IDLE_SECONDS = 30

/**
 * An honest client stops at its first 401 (the key stays wrong until someone changes it); twenty
 * workers behind one address, each retrying a revoked key every 15 s, make 80 a minute. The legacy
 * surface allows a good key 120 requests a minute; a hundred refusals a minute is past anything but
 * a script that does not read its answers.
 */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 100

/** 0–1,000,000, default DEFAULT_AUTH_FAILURES_PER_MINUTE; 0 turns the brake off. */
function authFailuresPerMinute(env: Env): number {
  return perMinute('AUTH_FAILURES_PER_MINUTE', optional(env, 'AUTH_FAILURES_PER_MINUTE'), DEFAULT_AUTH_FAILURES_PER_MINUTE)
}

/**
 * New visitor sessions per client address and widget key, a minute (0: no limit). A visitor keeps
 * its session in the browser, so it starts one per visitor, not per page; a browser that cannot
 * store it starts one per page view. 30 a minute is a page view every 2 s from one address (an
 * office behind one NAT included), while one script can no longer take the whole widget's 1,000
 * a minute (src/features/web/limits.ts) from the site's real visitors.
 */
export const DEFAULT_VISITOR_SESSIONS_PER_MINUTE = 30

/** A per-minute limit: a whole number from 0 (no limit) to 1,000,000, the default where the variable is unset. */
function perMinute(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback
  if (!/^\d+$/.test(v) || Number(v) > 1_000_000) throw new ConfigError(name, `must be a whole number from 0 to 1000000 (got "${v}")`)
  return Number(v)
}

function listenPort(env: Env, name: string): number | undefined {
  const v = optional(env, name)
  if (v === undefined) return undefined
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new ConfigError(name, `must be a whole number from 0 to 65535 (got "${v}")`)
  return Number(v)
}

export function loadConfig(env: Env = process.env): Config {
  const portText = optional(env, 'PORT') ?? '3000'
  const port = Number(portText)
  // 0 lets the OS pick a free port (tests); otherwise a real TCP port.
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new ConfigError('PORT', `must be a whole number from 0 to 65535 (got "${portText}")`)
  }
  const host = optional(env, 'HOST') ?? '0.0.0.0'
  const consoleToken = optional(env, 'CONSOLE_TOKEN')
  // 24 characters of a random token is ~120 bits; shorter tokens are guessable.
  if (consoleToken !== undefined && consoleToken.length < 24) {
    throw new ConfigError('CONSOLE_TOKEN', 'must be at least 24 characters')
  }
  const secretKey = optional(env, 'SECRET_KEY')
  // AES-256 key material is derived from it; 32 characters keeps it from being a short password.
  if (secretKey !== undefined && secretKey.length < 32) {
    throw new ConfigError('SECRET_KEY', 'must be at least 32 characters')
  }
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, '') ?? `http://localhost:${port || 3000}`
  const config: Config = {
    port,
    host,
    reusePort: flag(env, 'REUSE_PORT'),
    dataDir: resolve(optional(env, 'DATA_DIR') ?? './data'),
    mongodbUrl: url(env, 'MONGODB_URL', ['mongodb:', 'mongodb+srv:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    consoleToken,
    publicBaseUrl,
    sandboxMediaUrl: url(env, 'SANDBOX_MEDIA_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    secretKey,
    clock: oneOf(env, 'SERVICE_CLOCK', ['system', 'manual'] as const, 'system'),
    telephonyProvider: oneOf(env, 'TELEPHONY_PROVIDER', ['sandbox', 'twilio', 'telnyx'] as const, 'sandbox'),
    allowPrivateWebhookTargets: flag(env, 'ALLOW_PRIVATE_WEBHOOK_TARGETS'),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    smtpFrom: smtpFrom(env, publicBaseUrl),
    smtpListenPort: listenPort(env, 'SMTP_LISTEN_PORT'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    sqliteLocking: oneOf(env, 'SQLITE_LOCKING', ['exclusive', 'shared'] as const, 'exclusive'),
    inspect: flag(env, 'INSPECT'),
    inspectUrl: url(env, 'INSPECT_URL', ['ws:', 'wss:']),
    inspectPort: inspectorPort(env, port),
    providers: {
      openaiApiKey: optional(env, 'OPENAI_API_KEY'),
      openaiBaseUrl: llmBaseUrl(env, 'OPENAI_BASE_URL'),
      anthropicBaseUrl: llmBaseUrl(env, 'ANTHROPIC_BASE_URL'),
      anthropicApiKey: optional(env, 'ANTHROPIC_API_KEY'),
      deepgramApiKey: optional(env, 'DEEPGRAM_API_KEY'),
      elevenlabsApiKey: optional(env, 'ELEVENLABS_API_KEY'),
      twilioAccountSid: optional(env, 'TWILIO_ACCOUNT_SID'),
      twilioAuthToken: optional(env, 'TWILIO_AUTH_TOKEN'),
      twilioApiBaseUrl: llmBaseUrl(env, 'TWILIO_API_BASE_URL'),
      telnyxApiKey: optional(env, 'TELNYX_API_KEY'),
      telnyxConnectionId: optional(env, 'TELNYX_CONNECTION_ID'),
      telnyxPublicKey: optional(env, 'TELNYX_PUBLIC_KEY'),
      telnyxApiBaseUrl: llmBaseUrl(env, 'TELNYX_API_BASE_URL'),
      deepgramBaseUrl: url(env, 'DEEPGRAM_BASE_URL', ['wss:', 'ws:']),
      elevenlabsBaseUrl: llmBaseUrl(env, 'ELEVENLABS_BASE_URL'),
      cartesiaApiKey: optional(env, 'CARTESIA_API_KEY'),
      cartesiaBaseUrl: llmBaseUrl(env, 'CARTESIA_BASE_URL'),
      assemblyaiApiKey: optional(env, 'ASSEMBLYAI_API_KEY'),
      assemblyaiBaseUrl: url(env, 'ASSEMBLYAI_BASE_URL', ['wss:', 'ws:']),
    },
    chatapp: chatappConfig(env),
    campaignSendRate: sendRate(env),
    drainSeconds: drainSeconds(env),
    httpIdleSeconds: httpIdleSeconds(env),
    authFailuresPerMinute: authFailuresPerMinute(env),
    visitorSessionsPerMinute: perMinute('VISITOR_SESSIONS_PER_MINUTE', optional(env, 'VISITOR_SESSIONS_PER_MINUTE'), DEFAULT_VISITOR_SESSIONS_PER_MINUTE),
    botapp: {
      provider: oneOf(env, 'BOTAPP_PROVIDER', ['sandbox', 'telegram'] as const, 'sandbox'),
      telegramApiUrl: llmBaseUrl(env, 'TELEGRAM_API_URL') ?? 'https://api.telegram.org',
    },
    admission: {
      // The default is measured (docs/benchmarks.md "Capacity"); 100,000 is past any machine.
      maxCalls: optionalCount(env, 'CALLS_MAX_LIVE', 1, 100_000, 'maxCalls').maxCalls ?? DEFAULT_MAX_LIVE_CALLS,
      ...optionalCount(env, 'CALLS_MAX_RSS_MB', 64, 1_048_576, 'maxRssMb'),
      // Median lateness of a 20 ms timer (features/calls/placing/admission.ts says why 50); 10 s is a dead loop.
      maxLoopLagMs: optionalCount(env, 'CALLS_MAX_LOOP_LAG_MS', 1, 10_000, 'maxLoopLagMs').maxLoopLagMs ?? 50,
      // Half the 1 s the agent's audio is sent ahead (admission.ts says why); 0 turns the signal off.
      minPlayoutLeadMs: optionalCount(env, 'CALLS_MIN_PLAYOUT_LEAD_MS', 0, 1_000, 'minPlayoutLeadMs').minPlayoutLeadMs ?? 500,
    },
    speech: {
      stt: oneOf(env, 'STT_PROVIDER', ['auto', 'deepgram', 'assemblyai', 'deepgram-flux', 'openai', 'pocketsphinx', 'sandbox'] as const, 'auto'),
      tts: oneOf(env, 'TTS_PROVIDER', ['auto', 'elevenlabs', 'openai', 'cartesia', 'espeak', 'sandbox'] as const, 'auto'),
      vad: oneOf(env, 'VAD', ['silero', 'energy'] as const, 'silero'),
      chunkMs: mediaChunkMs(env),
      // 64 decoders hold ~6 GB; a queue past 1,000 utterances is minutes of waiting.
      ...optionalCount(env, 'STT_DECODERS', 1, 64, 'decoders'),
      ...optionalCount(env, 'STT_DECODER_QUEUE', 0, 1000, 'decoderQueue'),
      // A sentence is CPU on its thread: more threads than cores only take turns; 16 is past any box here.
      ...optionalCount(env, 'TTS_SYNTHESIZERS', 1, 16, 'synthesizers'),
    },
  }
  if (config.telephonyProvider === 'twilio' && (!config.providers.twilioAccountSid || !config.providers.twilioAuthToken)) {
    throw new ConfigError('TELEPHONY_PROVIDER', 'twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN')
  }
  if (config.telephonyProvider === 'telnyx' && (!config.providers.telnyxApiKey || !config.providers.telnyxConnectionId || !config.providers.telnyxPublicKey)) {
    throw new ConfigError('TELEPHONY_PROVIDER', 'telnyx needs TELNYX_API_KEY, TELNYX_CONNECTION_ID and TELNYX_PUBLIC_KEY')
  }
  return config
}
