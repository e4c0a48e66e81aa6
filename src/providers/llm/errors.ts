/**
 * One error type for every LanguageModel failure, classified so callers decide without parsing
 * text: retry later (`rate_limit`, `unavailable`, `timeout`), tell the developer to fix their key
 * or settings (`auth`, `bad_request`), or report a broken vendor (`protocol`).
 * Messages are plain words for the BYOK notification and the console; they never carry the key.
 */

export type LlmErrorKind = 'auth' | 'rate_limit' | 'timeout' | 'bad_request' | 'unavailable' | 'protocol' | 'aborted'

export interface LlmErrorInit {
  kind: LlmErrorKind
  provider: string
  message: string
  status?: number
  /** From `retry-after-ms` / `Retry-After` on a 429 (or 503), in milliseconds. */
  retryAfterMs?: number
  cause?: unknown
}

export class LlmError extends Error {
  override readonly name = 'LlmError'
  readonly kind: LlmErrorKind
  readonly provider: string
  readonly status?: number
  readonly retryAfterMs?: number

  constructor(init: LlmErrorInit) {
    // Messages often start with a vendor label ("the model server at …"): make them sentences.
    const message = init.message.charAt(0).toUpperCase() + init.message.slice(1)
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.kind = init.kind
    this.provider = init.provider
    this.status = init.status
    this.retryAfterMs = init.retryAfterMs
  }

  /** Worth trying again later with the same request. */
  get retryable(): boolean {
    return this.kind === 'rate_limit' || this.kind === 'unavailable' || this.kind === 'timeout'
  }
}

export const isLlmError = (e: unknown): e is LlmError => e instanceof LlmError

/** HTTP status → kind, the same for every vendor. */
export function kindForStatus(status: number): LlmErrorKind {
  if (status === 401 || status === 403) return 'auth'
  if (status === 429) return 'rate_limit'
  if (status === 408) return 'timeout'
  if (status >= 500) return 'unavailable' // includes Anthropic's 529 "overloaded"
  return 'bad_request' // 400, 404, 422 and the other 4xx: the request or its model is wrong
}

/**
 * `retry-after-ms` (Azure, OpenAI) wins over `Retry-After` (seconds or an HTTP date, RFC 9110).
 */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.round(Number(ms))
  const ra = headers.get('retry-after')
  if (!ra) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.round(Number(ra) * 1000)
  const at = Date.parse(ra)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * The human message inside a vendor's error body. Shapes seen: OpenAI/Azure/llama.cpp
 * `{ error: { message } }`, Anthropic `{ type: 'error', error: { type, message } }`, Ollama
 * `{ error: "text" }`, vLLM `{ object: 'error', message }`, FastAPI-style `{ detail }`.
 */
export function vendorMessage(body: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    const text = body.trim()
    // An HTML error page from a proxy says nothing useful; short plain text does.
    return text && text.length <= 300 && !text.startsWith('<') ? text : undefined
  }
  if (!parsed || typeof parsed !== 'object') return undefined
  const o = parsed as Record<string, unknown>
  const err = o.error
  if (typeof err === 'string') return err
  if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string') {
    return (err as Record<string, string>).message
  }
  if (typeof o.message === 'string') return o.message
  if (typeof o.detail === 'string') return o.detail
  return undefined
}

/**
 * Removes secrets from text we did not write. Vendors echo keys back (OpenAI's 401 says
 * "Incorrect API key provided: sk-abc…xyz"), so the exact key and anything shaped like one go.
 */
export function redact(text: string, secrets: (string | undefined)[] = []): string {
  let out = text
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]')
  return out.replace(/\b(sk|rk|pk)-[A-Za-z0-9_*-]{6,}/g, '[redacted]')
}

const WHAT: Record<LlmErrorKind, string> = {
  auth: 'rejected the API key',
  rate_limit: 'is rate limiting requests',
  timeout: 'timed out',
  bad_request: 'refused the request',
  unavailable: 'is unavailable',
  protocol: 'sent an answer we could not read',
  aborted: 'request was cancelled',
}

/** Builds the error for a non-2xx answer; reads at most a small body. */
export async function errorFromResponse(provider: string, label: string, res: Response, secrets: (string | undefined)[]): Promise<LlmError> {
  const kind = kindForStatus(res.status)
  let body = ''
  try {
    body = (await res.text()).slice(0, 4096)
  } catch {
    // The body is only decoration for the message; the status already decided the kind.
  }
  const detail = vendorMessage(body)
  const retryAfterMs = kind === 'rate_limit' || res.status === 503 ? parseRetryAfter(res.headers) : undefined
  const message = redact(`${label} ${WHAT[kind]} (HTTP ${res.status})${detail ? `: ${detail}` : '.'}`, secrets)
  return new LlmError({ kind, provider, status: res.status, retryAfterMs, message })
}

/** Error bodies sent inside a stream (Anthropic `error` events, OpenAI-compatible `{error}` chunks). */
export function kindForVendorType(type: string | undefined): LlmErrorKind {
  switch (type) {
    case 'authentication_error':
    case 'permission_error':
    case 'invalid_api_key':
      return 'auth'
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
    case 'insufficient_quota':
      return 'rate_limit'
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
    case 'context_length_exceeded':
      return 'bad_request'
    case 'timeout_error':
      return 'timeout'
    default:
      return 'unavailable' // overloaded_error, api_error, server_error and anything new
  }
}

export function streamError(provider: string, label: string, type: string | undefined, msg: string | undefined, secrets: (string | undefined)[]): LlmError {
  const kind = kindForVendorType(type)
  const message = redact(`${label} ${WHAT[kind]} during the answer${msg ? `: ${msg}` : '.'}`, secrets)
  return new LlmError({ kind, provider, message })
}

export function protocolError(provider: string, message: string, cause?: unknown): LlmError {
  return new LlmError({ kind: 'protocol', provider, message, cause })
}
