/**
 * Hostile pages and pastes must cost time in proportion to their size. These inputs took minutes
 * before the scans were made linear (the suite's per-test timeout would stop them); no timing is
 * asserted, only that each completes with the right answer.
 */
import { expect, test } from 'bun:test'
import { chunkText } from '../../../src/features/knowledge/chunking'
import { needsScripting } from '../../../src/features/knowledge/page-text'

test('5 MiB of unclosed <script> tags is a scripted page, and the scan finishes', () => {
  expect(needsScripting('<script>'.repeat((5 * 1024 * 1024) / 8))).toBe(true)
})

test('a million unclosed <div> or <app-root> tags are scanned without retrying from each one', () => {
  expect(needsScripting('<div '.repeat(1_000_000))).toBe(false)
  expect(needsScripting('<app-root '.repeat(500_000))).toBe(false)
})

test('200,000 characters of spaces between two letters chunk into one short passage', () => {
  const passages = chunkText(`a${' '.repeat(199_998)}a`)
  expect(passages.map((p) => p.replace(/\s+/g, ' '))).toEqual(['a a'])
})
