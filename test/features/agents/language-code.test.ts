/** Agent languages as the BCP-47 codes speech engines take: every language the console offers has one. */
import { expect, test } from 'bun:test'
import { LANGUAGES, languageCode } from '../../../src/features/agents/languages'

test('every offered language maps to its code; auto and unknown are English; codes pass through', () => {
  for (const name of LANGUAGES) expect(languageCode(name)).toMatch(/^[a-z]{2}$/)
  expect(languageCode('Indonesian')).toBe('id')
  expect(languageCode('tamil')).toBe('ta')
  expect(languageCode('auto')).toBe('en')
  expect(languageCode(null)).toBe('en')
  expect(languageCode('en-US')).toBe('en-us')
})
