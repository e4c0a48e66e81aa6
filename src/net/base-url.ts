/**
 * The rule for a vendor's base URL (an LLM endpoint set by the operator or a BYOK key): https
 * anywhere, plain http only to this machine (local model servers, tests), no credentials, query or
 * fragment. Boot's config and the LLM adapters both apply it, so boot refuses what a chat would.
 */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/** The URL without its trailing slashes, or why it is refused. */
export function checkedBaseUrl(raw: string): { url: string } | { refused: string } {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { refused: `The base URL "${raw}" is not a valid URL.` }
  }
  const loopback = LOOPBACK.test(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return { refused: 'The base URL must use https (plain http is allowed only for this machine).' }
  }
  if (url.username || url.password) return { refused: 'The base URL must not carry a user name or password.' }
  if (url.search || url.hash) return { refused: 'The base URL must not carry a query or fragment.' }
  return { url: url.toString().replace(/\/+$/, '') }
}
