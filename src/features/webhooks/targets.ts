/**
 * Where a webhook may send: an https URL (v1 and legacy) or an email address (v1). Addresses
 * inside the service's own network are refused unless ALLOW_PRIVATE_WEBHOOK_TARGETS is set:
 * here when the webhook is created or its URL changed (so the mistake is reported at once), and
 * again by safeFetch at every delivery, after DNS (a name can be re-pointed after it was
 * registered). Deliveries do not follow redirects (attempt.ts), so no other host is reached.
 * A URL with a user name or password is refused: URLs are shown and logged.
 *
 * With ALLOW_PRIVATE_WEBHOOK_TARGETS (local development only) plain `http://` is accepted too, but
 * only to private or loopback addresses: receivers on a developer's machine rarely have a
 * certificate, and a public receiver must still get https (docs/spec.md). Checked here and again at
 * every delivery (attempt.ts), after DNS.
 */
import { assertPrivateHost, assertPublicHost, BlockedTargetError, type Resolver, systemResolver } from '../../net/address-guard'

export type Target = { kind: 'url'; url: string } | { kind: 'email'; address: string }

export class TargetError extends Error {
  override readonly name = 'TargetError'
}

// docs/spec.md caps reply media URLs at 2,048 characters; the same bound serves webhook URLs.
export const MAX_URL_CHARS = 2048
// RFC 5321: a forward path is at most 256 octets including the brackets, so 254 for the address.
export const MAX_EMAIL_CHARS = 254
// A create or PATCH waits this long for DNS before accepting a name it could not resolve: the
// delivery-time check still guards it, and a registration should not hang on a slow resolver.
export const CREATE_DNS_TIMEOUT_MS = 3_000

// Local part, @, a domain with at least one dot: the shape every deliverable address has.
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:".]+$/

export interface TargetRules {
  allowPrivate: boolean
  /** v1 takes email addresses; legacy only URLs. */
  email: boolean
}

/** Reads a target; TargetError says in plain words what is wrong with it. */
export function parseTarget(raw: string, rules: TargetRules): Target {
  const value = raw.trim()
  if (rules.email && !value.includes('://') && value.includes('@')) {
    if (value.length > MAX_EMAIL_CHARS || !EMAIL.test(value)) throw new TargetError('is not a valid email address')
    return { kind: 'email', address: value.toLowerCase() }
  }
  if (value.length > MAX_URL_CHARS) throw new TargetError(`must be at most ${MAX_URL_CHARS} characters`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new TargetError(rules.email ? 'must be an https URL or an email address' : 'must be an https URL')
  }
  const schemes = rules.allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) throw new TargetError(`must use https (got ${url.protocol.replace(/:$/, '')})`)
  if (!url.hostname) throw new TargetError('has no host')
  // A URL is stored, shown in every read and written to logs: a password in it would leak there.
  // Receivers authenticate us by the signature; they need no credentials in the URL.
  if (url.username || url.password) throw new TargetError('must not contain a user name or password (user:password@); verify x-service-signature instead')
  return { kind: 'url', url: url.toString() }
}

/**
 * Refuses a URL whose host is, or resolves to, an internal address. A name that does not resolve
 * (yet), or not within CREATE_DNS_TIMEOUT_MS, is accepted: deliveries will fail and say why.
 */
export async function checkTargetAddress(target: Target, rules: TargetRules, resolve: Resolver = systemResolver): Promise<void> {
  if (target.kind !== 'url') return
  const url = new URL(target.url)
  if (url.protocol === 'http:') return checkPlainHttp(url.hostname, resolve)
  if (rules.allowPrivate) return
  const host = url.hostname
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), CREATE_DNS_TIMEOUT_MS)))
  try {
    await Promise.race([assertPublicHost(host, resolve), timeout])
  } catch (err) {
    if (err instanceof BlockedTargetError) throw new TargetError(`is inside the service's own network and cannot receive webhooks (${err.message})`)
    // Not resolvable: accepted, see above.
  } finally {
    clearTimeout(timer)
  }
}

/** The message for a plain-http URL that is not private: shown at create and at delivery. */
export const HTTP_ONLY_PRIVATE = 'must use https; plain http is accepted only for private or loopback addresses (ALLOW_PRIVATE_WEBHOOK_TARGETS)'

/** Plain http (parseTarget lets it through only under ALLOW_PRIVATE_WEBHOOK_TARGETS): private hosts only. */
async function checkPlainHttp(host: string, resolve: Resolver): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error('DNS timed out')), CREATE_DNS_TIMEOUT_MS)))
  try {
    await Promise.race([assertPrivateHost(host, resolve), timeout])
  } catch (err) {
    // Unlike https, a name that does not resolve is refused: nothing shows it is private.
    throw new TargetError(`${HTTP_ONLY_PRIVATE}: ${(err as Error).message}`)
  } finally {
    clearTimeout(timer)
  }
}
