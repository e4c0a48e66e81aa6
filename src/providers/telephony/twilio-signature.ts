/**
 * Twilio's request signature (X-Twilio-Signature), as its docs and helper libraries define it:
 * base64 of HMAC-SHA1, keyed with the account's auth token, over the full URL Twilio requested
 * followed by every POST parameter as name + value, sorted by name (a repeated parameter: its
 * distinct values, sorted). Compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export function twilioSignature(authToken: string, url: string, params: Record<string, string | string[]>): string {
  const data = Object.keys(params)
    .sort()
    .map((name) => {
      const value = params[name]
      // A repeated parameter counts each distinct value once, in sorted order.
      return Array.isArray(value)
        ? [...new Set(value)]
            .sort()
            .map((v) => name + v)
            .join('')
        : name + value
    })
    .join('')
  return createHmac('sha1', authToken)
    .update(url + data)
    .digest('base64')
}

/**
 * Twilio signs the URL as it requested it, which may or may not name the scheme's standard port
 * (its helper libraries accept either); so both spellings are tried.
 */
function urlVariants(url: string): string[] {
  const u = new URL(url)
  const standard = u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : ''
  if (!standard) return [url]
  const authority = `${u.username ? `${u.username}${u.password ? `:${u.password}` : ''}@` : ''}${u.hostname}`
  const explicit = `${u.protocol}//${authority}:${standard}${u.pathname}${u.search}`
  const bare = `${u.protocol}//${authority}${u.pathname}${u.search}`
  return [...new Set([url, explicit, bare])]
}

export function verifyTwilioSignature(authToken: string, url: string, params: Record<string, string | string[]>, header: string | null): boolean {
  if (!header) return false
  const given = Buffer.from(header)
  return urlVariants(url).some((candidate) => {
    const expected = Buffer.from(twilioSignature(authToken, candidate, params))
    return expected.length === given.length && timingSafeEqual(expected, given)
  })
}
