/**
 * Decides whether an outbound request may go to a host. Anything a customer can point us at
 * (a knowledge URL, a webhook endpoint) must not reach the service's own network: loopback,
 * private and link-local ranges (cloud metadata lives at 169.254.169.254), CGNAT, multicast,
 * reserved space, and IPv6 forms that embed any of those.
 *
 * Range membership comes from ipaddr.js's `range()` tables (RFC 6890 and friends), not from
 * hand-written CIDR math: an address is allowed only when the library calls it `unicast`, i.e.
 * it is in none of the special-purpose ranges.
 */
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

export class BlockedTargetError extends Error {
  constructor(
    readonly host: string,
    readonly address: string | null,
    readonly reason: string,
  ) {
    super(address && address !== host ? `refused to connect to ${host}: it resolves to ${address} (${reason})` : `refused to connect to ${host} (${reason})`)
    this.name = 'BlockedTargetError'
  }
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6

/** Plain-words names for ipaddr.js range labels, used in error messages. */
const REASONS: Record<string, string> = {
  unspecified: 'unspecified address',
  broadcast: 'broadcast address',
  multicast: 'multicast address',
  linkLocal: 'link-local address, which includes cloud metadata endpoints',
  loopback: 'loopback address',
  carrierGradeNat: 'carrier-grade NAT (shared) address',
  private: 'private network address',
  uniqueLocal: 'private (unique local) IPv6 address',
  reserved: 'reserved address',
  deprecatedSiteLocal: 'deprecated site-local IPv6 address',
}

/**
 * Why `address` must not be contacted, or null when it is a public unicast address.
 * IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the IPv4 address inside them, so `::ffff:127.0.0.1` is
 * loopback. Other special IPv6 ranges (Teredo, ORCHID, discard, …) have no business being a
 * webhook or web page target and are refused outright.
 */
export function blockedReason(address: string): string | null {
  let ip: Parsed
  try {
    ip = ipaddr.parse(stripBrackets(address))
  } catch {
    return 'not an IP address'
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6
    const embedded = embeddedIPv4(v6)
    if (embedded) {
      const inner = blockedReason(embedded.toString())
      return inner ? `${inner} inside an IPv6 address` : null
    }
  }
  const range = ip.range()
  if (range !== 'unicast') return REASONS[range] ?? `special-purpose address (${range})`
  // `::a.b.c.d` (IPv4-compatible, deprecated by RFC 4291) is not in ipaddr's table.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) {
    return 'deprecated IPv4-compatible IPv6 address'
  }
  return null
}

function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts
  const range = ip.range()
  if (range === 'ipv4Mapped' || range === 'rfc6145') return ipFromWords(p[6], p[7])
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the last 32 bits are the IPv4 address.
  if (range === 'rfc6052' && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return ipFromWords(p[6], p[7])
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 routes to IPv4 AA.BB.CC.DD.
  if (range === '6to4') return ipFromWords(p[1], p[2])
  return null
}

const ipFromWords = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])

const stripBrackets = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host)

/** `localhost` and any `*.localhost` name resolve to loopback by definition (RFC 6761). */
export function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '')
  return h === 'localhost' || h.endsWith('.localhost')
}

export type Resolver = (host: string) => Promise<string[]>

/** Every address the OS resolver returns for a name (the same answer `fetch` will use). */
export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

/**
 * Resolves `host` and throws BlockedTargetError unless EVERY address is public: a name with
 * one public and one private record could otherwise be steered to the private one by the
 * connector's address choice. Returns the resolved addresses. A name that does not resolve is
 * not "blocked": the resolver's error propagates (safeFetch reports it as a network failure).
 */
export async function assertPublicHost(host: string, resolve: Resolver = systemResolver): Promise<string[]> {
  const bare = stripBrackets(host)
  if (isLocalhostName(bare)) throw new BlockedTargetError(host, null, 'localhost name')
  let addresses: string[]
  if (ipaddr.isValid(bare)) {
    addresses = [bare]
  } else {
    addresses = await resolve(bare)
    if (addresses.length === 0) throw new Error(`${host} has no addresses`)
  }
  for (const address of addresses) {
    const reason = blockedReason(address)
    if (reason) throw new BlockedTargetError(host, address, reason)
  }
  return addresses
}

/**
 * The opposite guard, for plain `http://` under ALLOW_PRIVATE_WEBHOOK_TARGETS: the host must be a
 * localhost name or resolve only to internal addresses (a developer's own machine or network).
 * A public host, or one that does not resolve, is refused: http would cross the internet unencrypted.
 */
export async function assertPrivateHost(host: string, resolve: Resolver = systemResolver): Promise<void> {
  const bare = stripBrackets(host)
  if (isLocalhostName(bare)) return
  const addresses = ipaddr.isValid(bare) ? [bare] : await resolve(bare)
  if (addresses.length === 0) throw new Error(`${host} has no addresses`)
  const open = addresses.find((a) => blockedReason(a) === null)
  if (open) throw new Error(`${host} is a public address (${open})`)
}
