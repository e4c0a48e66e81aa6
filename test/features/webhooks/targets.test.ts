import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../../src/config'
import { checkTargetAddress, parseTarget, TargetError } from '../../../src/features/webhooks/targets'

const v1 = { allowPrivate: false, email: true }
const legacy = { allowPrivate: false, email: false }

describe('parseTarget', () => {
  test('https URLs and email addresses (v1); https only (legacy)', () => {
    expect(parseTarget('https://hooks.example.com/in', v1)).toEqual({ kind: 'url', url: 'https://hooks.example.com/in' })
    expect(parseTarget(' Ops@Example.COM ', v1)).toEqual({ kind: 'email', address: 'ops@example.com' })
    expect(() => parseTarget('ops@example.com', legacy)).toThrow(TargetError)
    expect(() => parseTarget('http://hooks.example.com/', v1)).toThrow('must use https (got http)')
    expect(() => parseTarget('ftp://x.example.com/', legacy)).toThrow('must use https')
    expect(() => parseTarget('nonsense', v1)).toThrow('an https URL or an email address')
    expect(() => parseTarget('a@b', v1)).toThrow('not a valid email address')
    expect(() => parseTarget(`https://x.example.com/${'a'.repeat(2100)}`, v1)).toThrow('2048')
  })
  test('a URL carrying a user name or password is refused (both surfaces), without quoting it', () => {
    for (const raw of ['https://user:pw@hooks.example.com/in', 'https://user@hooks.example.com/in', 'https://:pw@hooks.example.com/in']) {
      for (const rules of [v1, legacy, { allowPrivate: true, email: false }]) {
        const err = (() => {
          try {
            parseTarget(raw, rules)
          } catch (e) {
            return e as Error
          }
        })()
        expect(err).toBeInstanceOf(TargetError)
        expect(err!.message).toContain('must not contain a user name or password')
        expect(err!.message).not.toContain('pw')
      }
    }
  })
  test('http is accepted only when private targets are allowed (local development)', () => {
    expect(parseTarget('http://127.0.0.1:8080/x', { allowPrivate: true, email: false })).toEqual({ kind: 'url', url: 'http://127.0.0.1:8080/x' })
  })
})

describe('checkTargetAddress', () => {
  const resolveTo = (addresses: string[]) => async () => addresses
  test('refuses a name that resolves inside our network; accepts a public one', async () => {
    await expect(checkTargetAddress({ kind: 'url', url: 'https://in.example.com/' }, v1, resolveTo(['10.0.0.5']))).rejects.toThrow('private network address')
    await expect(checkTargetAddress({ kind: 'url', url: 'https://meta.example.com/' }, v1, resolveTo(['169.254.169.254']))).rejects.toThrow('link-local')
    await checkTargetAddress({ kind: 'url', url: 'https://ok.example.com/' }, v1, resolveTo(['93.184.216.34']))
  })
  test('a name that does not resolve is accepted (deliveries will say why they fail)', async () => {
    await checkTargetAddress({ kind: 'url', url: 'https://nx.example.com/' }, v1, async () => {
      throw new Error('ENOTFOUND')
    })
  })
  test('nothing is checked when private targets are allowed, or for email', async () => {
    await checkTargetAddress({ kind: 'url', url: 'https://127.0.0.1/' }, { allowPrivate: true, email: true })
    await checkTargetAddress({ kind: 'email', address: 'a@10.0.0.1.example' }, v1)
  })
})

describe('SMTP config', () => {
  const base = { DATA_DIR: '/tmp/x' }
  test('SMTP_URL must be smtp:// or smtps://; SMTP_FROM an address', () => {
    expect(loadConfig({ ...base, SMTP_URL: 'smtp://u:p@127.0.0.1:2525' }).smtpUrl).toBe('smtp://u:p@127.0.0.1:2525')
    expect(() => loadConfig({ ...base, SMTP_URL: 'http://mail' })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, SMTP_URL: 'http://mail' })).toThrow('SMTP_URL')
    expect(loadConfig({ ...base, SMTP_FROM: 'Hooks <hooks@example.com>' }).smtpFrom).toBe('Hooks <hooks@example.com>')
    expect(() => loadConfig({ ...base, SMTP_FROM: 'not an address' })).toThrow('SMTP_FROM')
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://api.example.com' }).smtpFrom).toBe('webhooks@api.example.com')
    expect(loadConfig(base).smtpUrl).toBeUndefined()
  })
})
