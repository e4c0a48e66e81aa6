import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { persistentSecret } from '../src/boot'

test('a secret is made once (0600, never an empty file), then read back; env wins', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'boot-')), 'data')
  const made = persistentSecret(dir, 'console-token', undefined, 32, 24)
  expect(made.source).toBe('generated')
  expect(made.value).toHaveLength(32)
  expect(statSync(join(dir, 'console-token')).mode & 0o777).toBe(0o600)
  expect(statSync(dir).mode & 0o777).toBe(0o700)
  expect(readFileSync(join(dir, 'console-token'), 'utf8').trim()).toBe(made.value)
  expect(persistentSecret(dir, 'console-token', undefined, 32, 24)).toEqual({ value: made.value, source: 'file' })
  expect(persistentSecret(dir, 'console-token', 'from-the-environment-123456', 32, 24)).toEqual({ value: 'from-the-environment-123456', source: 'env' })
})

test('an empty or short secret file stops boot instead of opening the console', () => {
  const dir = mkdtempSync(join(tmpdir(), 'boot-'))
  writeFileSync(join(dir, 'console-token'), '\n')
  expect(() => persistentSecret(dir, 'console-token', undefined, 32, 24)).toThrow('at least 24')
  writeFileSync(join(dir, 'secret-key'), 'short')
  expect(() => persistentSecret(dir, 'secret-key', undefined, 48, 32)).toThrow('at least 32')
})
