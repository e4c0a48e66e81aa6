/**
 * Outbound HTTP for URLs a customer gave us (knowledge pages, webhook deliveries).
 *
 * Guarantees:
 * - only http/https;
 * - the host of the first request AND of every redirect hop is resolved and every address must
 *   be public (address-guard.ts); redirects are followed by hand so each hop is checked, or not
 *   followed at all (`followRedirects: false`: the 3xx answer is returned as it is);
 * - one overall deadline covers DNS, every hop and the body;
 * - the body is read as a stream and reading stops at `maxBytes` (the answer says `truncated`).
 *
 * Remaining DNS-rebinding window: we resolve and check, then `fetch` resolves the name again to
 * connect. A hostile name server answering "public" to us and "10.0.0.1" a few milliseconds later
 * could slip through. Closing it means connecting to the checked IP while keeping the name for
 * TLS (SNI and certificate checks), which fetch does not offer; doing it would mean our own
 * HTTP/TLS client. We accept the window because: the OS resolver usually answers both lookups
 * from its cache; the attacker needs a zero-TTL name server racing us; knowledge fetches only
 * store text for the requester's own agent; webhook deliveries read nothing but the status. A
 * network egress policy (no route from app hosts to internal ranges) is the real backstop.
 */
import { assertPublicHost, BlockedTargetError, type Resolver, systemResolver } from './address-guard'

export { BlockedTargetError } from './address-guard'

export class FetchFailedError extends Error {
  constructor(
    message: string,
    readonly kind: 'bad_url' | 'timeout' | 'network' | 'too_many_redirects',
  ) {
    super(message)
    this.name = 'FetchFailedError'
  }
}

/** Five hops: browsers allow ~20, but legitimate pages and webhooks rarely need more than 2–3
 * (http→https, apex→www, a trailing-slash fix); every extra hop is another target to check. */
export const MAX_REDIRECTS = 5

export interface SafeFetchOptions {
  /** Skip the address checks: tests against loopback fakes, `ALLOW_PRIVATE_WEBHOOK_TARGETS`. */
  allowPrivate?: boolean
  timeoutMs: number
  maxBytes: number
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array<ArrayBuffer>
  /**
   * Default true (a browser's behaviour, right for pages). False returns a 3xx answer as it is,
   * with its `location` header: a webhook POST must not turn into a body-less GET somewhere else
   * (Fetch standard 301/302/303 rule) and then be counted as delivered.
   */
  followRedirects?: boolean
  /** Injected name resolution (tests); defaults to the OS resolver that fetch also uses. */
  resolve?: Resolver
  /**
   * Replaces the per-hop check (tests only: lets a loopback fake stand in for a public first
   * hop while later hops meet the real policy). Defaults to `assertPublicHost`.
   */
  checkTarget?: (url: URL) => Promise<unknown>
}

export interface SafeResponse {
  status: number
  headers: Headers
  /** The URL that finally answered, after redirects. */
  url: string
  text: string
  /** True when the body was longer than maxBytes and only its start was read. */
  truncated: boolean
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Credentials meant for one origin must not follow a redirect to another. */
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization']

export async function safeFetch(input: string, options: SafeFetchOptions): Promise<SafeResponse> {
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, options.timeoutMs)
  // DNS lookups cannot be aborted, so they race the same deadline.
  const deadline = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(timeoutError(options.timeoutMs)), { once: true }))
  deadline.catch(() => {})
  try {
    return await run(input, options, controller.signal, deadline)
  } catch (err) {
    if (timedOut) throw timeoutError(options.timeoutMs)
    if (err instanceof BlockedTargetError || err instanceof FetchFailedError) throw err
    throw new FetchFailedError(`could not reach ${hostOf(input)}: ${(err as Error).message}`, 'network')
  } finally {
    clearTimeout(timer)
  }
}

async function run(input: string, options: SafeFetchOptions, signal: AbortSignal, deadline: Promise<never>): Promise<SafeResponse> {
  let url = parseTarget(input)
  let method = (options.method ?? 'GET').toUpperCase()
  let body = options.body
  const headers = new Headers(options.headers)
  for (let hop = 0; ; hop++) {
    if (!options.allowPrivate) {
      const check = options.checkTarget?.(url) ?? assertPublicHost(url.hostname, options.resolve ?? systemResolver)
      await Promise.race([check, deadline])
    }
    const response = await fetch(url, { method, headers, body, redirect: 'manual', signal })
    const location = response.headers.get('location')
    if (!REDIRECT_STATUSES.has(response.status) || !location || options.followRedirects === false) {
      const { text, truncated } = await readCapped(response, options.maxBytes)
      return { status: response.status, headers: response.headers, url: url.toString(), text, truncated }
    }
    await response.body?.cancel().catch(() => {})
    if (hop >= MAX_REDIRECTS) {
      throw new FetchFailedError(`more than ${MAX_REDIRECTS} redirects starting at ${input}`, 'too_many_redirects')
    }
    const next = parseTarget(location, url)
    // Fetch standard: 303, and 301/302 after a POST, continue as a GET without a body.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET'
      body = undefined
      headers.delete('content-type')
    }
    if (next.origin !== url.origin) for (const h of ORIGIN_BOUND_HEADERS) headers.delete(h)
    url = next
  }
}

function parseTarget(raw: string, base?: URL): URL {
  let url: URL
  try {
    url = new URL(raw, base)
  } catch {
    throw new FetchFailedError(`not a valid URL: ${raw}`, 'bad_url')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BlockedTargetError(url.hostname || raw, null, `scheme ${url.protocol} is not allowed`)
  }
  return url
}

/**
 * Reads at most maxBytes of the body, then cancels the stream so the server stops sending.
 * fetch hands us decoded bytes, so a small gzip "bomb" also stops at the cap.
 */
async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size))
      size = maxBytes
      truncated = true
      await reader.cancel().catch(() => {})
      break
    }
    chunks.push(value)
    size += value.byteLength
  }
  const all = new Uint8Array(size)
  let offset = 0
  for (const c of chunks) {
    all.set(c, offset)
    offset += c.byteLength
  }
  // Non-fatal decoding: a multi-byte character cut by the cap becomes U+FFFD, not an error.
  return { text: new TextDecoder(charsetOf(response.headers)).decode(all), truncated }
}

function charsetOf(headers: Headers): string {
  const match = /charset=["']?([\w-]+)/i.exec(headers.get('content-type') ?? '')
  const label = match?.[1] ?? 'utf-8'
  try {
    new TextDecoder(label)
    return label
  } catch {
    return 'utf-8'
  }
}

const timeoutError = (ms: number) => new FetchFailedError(`no complete answer within ${ms} ms`, 'timeout')

function hostOf(raw: string): string {
  try {
    return new URL(raw).host
  } catch {
    return raw
  }
}
