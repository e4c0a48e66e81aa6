import { describe, expect, test } from 'bun:test'
import { assertPublicHost, BlockedTargetError, blockedReason, isLocalhostName } from '../../src/net/address-guard'

describe('blockedReason', () => {
  const blocked: [string, RegExp][] = [
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local.*metadata/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.254', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.251', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['192.0.2.10', /reserved/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['ff02::1', /multicast/],
    ['2001:db8::1', /reserved/],
    // IPv6 forms that carry a private IPv4 address
    ['::ffff:127.0.0.1', /loopback.*inside an IPv6/],
    ['::ffff:7f00:1', /loopback.*inside an IPv6/],
    ['::ffff:169.254.169.254', /link-local/],
    ['::ffff:10.0.0.1', /private/],
    ['64:ff9b::a00:1', /private.*inside an IPv6/],
    ['2002:a00:1::1', /private.*inside an IPv6/],
    ['::127.0.0.1', /loopback/], // ipaddr.js reads the dotted tail as IPv4-mapped
    ['::7f00:1', /IPv4-compatible/],
    ['[::1]', /loopback/],
    ['not-an-ip', /not an IP/],
  ]
  for (const [address, reason] of blocked) {
    test(`refuses ${address}`, () => {
      expect(blockedReason(address)).toMatch(reason)
    })
  }

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']
  for (const address of allowed) {
    test(`allows ${address}`, () => {
      expect(blockedReason(address)).toBeNull()
    })
  }
})

describe('isLocalhostName', () => {
  test('localhost and its subdomains, any case, trailing dot', () => {
    for (const h of ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'a.b.localhost']) expect(isLocalhostName(h)).toBe(true)
    for (const h of ['example.com', 'localhost.example.com', 'mylocalhost']) expect(isLocalhostName(h)).toBe(false)
  })
})

describe('assertPublicHost', () => {
  const resolverOf = (table: Record<string, string[]>) => async (host: string) => {
    const found = table[host]
    if (!found) throw new Error(`ENOTFOUND ${host}`)
    return found
  }

  test('passes a name whose every address is public', async () => {
    const resolve = resolverOf({ 'shop.example': ['93.184.216.34', '2606:2800:220:1::1'] })
    expect(await assertPublicHost('shop.example', resolve)).toEqual(['93.184.216.34', '2606:2800:220:1::1'])
  })

  test('refuses a name when any one address is private, naming it', async () => {
    const resolve = resolverOf({ 'mixed.example': ['93.184.216.34', '10.0.0.7'] })
    const err = await assertPublicHost('mixed.example', resolve).catch((e) => e)
    expect(err).toBeInstanceOf(BlockedTargetError)
    expect(err.address).toBe('10.0.0.7')
    expect(err.message).toContain('mixed.example')
    expect(err.message).toContain('10.0.0.7')
    expect(err.message).toContain('private')
  })

  test('refuses a name that resolves to cloud metadata', async () => {
    const resolve = resolverOf({ 'meta.example': ['169.254.169.254'] })
    await expect(assertPublicHost('meta.example', resolve)).rejects.toThrow(/169\.254\.169\.254.*link-local/)
  })

  test('refuses localhost names without resolving them', async () => {
    let asked = false
    const resolve = async () => {
      asked = true
      return ['93.184.216.34']
    }
    await expect(assertPublicHost('app.localhost', resolve)).rejects.toThrow(/localhost name/)
    expect(asked).toBe(false)
  })

  test('checks IP literals directly, with or without brackets', async () => {
    await expect(assertPublicHost('127.0.0.1')).rejects.toThrow(/loopback/)
    await expect(assertPublicHost('[::ffff:127.0.0.1]')).rejects.toThrow(/loopback/)
    expect(await assertPublicHost('8.8.8.8')).toEqual(['8.8.8.8'])
  })

  test('a name that does not resolve is a lookup failure, not a block', async () => {
    const err = await assertPublicHost('nowhere.example', resolverOf({})).catch((e) => e)
    expect(err).not.toBeInstanceOf(BlockedTargetError)
    expect(err.message).toContain('ENOTFOUND')
  })

  test('the real resolver: localhost resolves to loopback and is refused', async () => {
    // `localhost` is refused by name; `localhost` through the OS resolver would be loopback too.
    await expect(assertPublicHost('localhost')).rejects.toBeInstanceOf(BlockedTargetError)
  })
})
