/**
 * One delivery attempt to one target, as a plain outcome (never throws): a signed POST through
 * the guarded fetch, or one email through SMTP. v1 and legacy deliveries both use it.
 *
 * Redirects are not followed (as Stripe does): following one would turn the signed POST into a
 * body-less GET (301/302/303) that a 2xx then marks delivered while the event is lost, and would
 * send the signature to a host nobody registered. A 3xx is a failed delivery naming the target
 * it pointed to, so the owner can register that URL instead.
 */

import { assertPrivateHost } from '../../net/address-guard'
import { BlockedTargetError, FetchFailedError, safeFetch } from '../../net/safe-fetch'
import { EmailFailedError, type EmailSender } from '../../providers/email'
import { HTTP_ONLY_PRIVATE, type Target } from './targets'

export interface AttemptOutcome {
  ok: boolean
  /** HTTP status, or the SMTP reply code for email; null when no answer came. */
  status: number | null
  error: string | null
}

// Only the status decides success; the first 4 KB of an error answer are plenty to quote.
const MAX_RESPONSE_BYTES = 4096
// How much of an error answer goes into lastError / error_message: one readable line.
const ERROR_SNIPPET_CHARS = 200

export interface SignedRequest {
  body: string
  headers: Record<string, string>
  /** A subject line and a human summary, used when the target is an email address. */
  subject: string
  summary: string
  /** Kept with an email in the outbox (and for erasure). */
  eventId: string
  workspaceId: string
}

export interface AttemptDeps {
  allowPrivate: boolean
  timeoutMs: number
  email: EmailSender
  /** Hears each attempt's outcome (the webhook deliveries on /metrics). */
  counted?: (outcome: AttemptOutcome) => void
}

export async function attempt(target: Target, request: SignedRequest, deps: AttemptDeps): Promise<AttemptOutcome> {
  const outcome = target.kind === 'email' ? await sendEmail(target.address, request, deps.email) : await post(target.url, request, deps)
  deps.counted?.(outcome)
  return outcome
}

async function post(url: string, request: SignedRequest, deps: AttemptDeps): Promise<AttemptOutcome> {
  try {
    // A plain-http URL (accepted only under ALLOW_PRIVATE_WEBHOOK_TARGETS) must still lead inside:
    // its name may have been re-pointed to a public address since it was registered.
    const parsed = new URL(url)
    if (parsed.protocol === 'http:') {
      try {
        await assertPrivateHost(parsed.hostname)
      } catch (err) {
        return { ok: false, status: null, error: `${HTTP_ONLY_PRIVATE}: ${(err as Error).message}` }
      }
    }
    const res = await safeFetch(url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      timeoutMs: deps.timeoutMs,
      maxBytes: MAX_RESPONSE_BYTES,
      allowPrivate: deps.allowPrivate,
      followRedirects: false,
    })
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
    if (location) return { ok: false, status: res.status, error: redirectError(res.status, location, res.url) }
    const snippet = res.text.replace(/\s+/g, ' ').trim().slice(0, ERROR_SNIPPET_CHARS)
    return { ok: false, status: res.status, error: `HTTP ${res.status}${snippet ? `: ${snippet}` : ''}` }
  } catch (err) {
    if (err instanceof BlockedTargetError || err instanceof FetchFailedError) return { ok: false, status: null, error: err.message }
    return { ok: false, status: null, error: `could not deliver: ${(err as Error).message ?? String(err)}` }
  }
}

function redirectError(status: number, location: string, from: string): string {
  let to = location
  try {
    const url = new URL(location, from)
    // Credentials have no place in lastError (it is shown and logged).
    url.username = ''
    url.password = ''
    to = url.toString()
  } catch {
    /* quoted as sent */
  }
  return `HTTP ${status}: redirected to ${to.slice(0, ERROR_SNIPPET_CHARS)}; webhook deliveries do not follow redirects, register that URL instead`
}

async function sendEmail(address: string, request: SignedRequest, email: EmailSender): Promise<AttemptOutcome> {
  try {
    const receipt = await email.send({
      to: address,
      subject: request.subject,
      text: `${request.summary}\n\nThe event, exactly as signed, is attached as event.json; x-service-signature is the HMAC-SHA256 of that file's bytes.\n\n${request.body}\n`,
      // The same signature and ids as an HTTP delivery, so a mail-processing receiver can verify and de-duplicate.
      headers: Object.fromEntries(Object.entries(request.headers).filter(([name]) => name.startsWith('x-service-'))),
      attachments: [{ filename: 'event.json', contentType: 'application/json', content: request.body }],
      eventId: request.eventId,
      workspaceId: request.workspaceId,
    })
    return { ok: true, status: receipt.code, error: null }
  } catch (err) {
    if (err instanceof EmailFailedError) return { ok: false, status: err.code, error: err.message }
    return { ok: false, status: null, error: `email not sent: ${(err as Error).message ?? String(err)}` }
  }
}
