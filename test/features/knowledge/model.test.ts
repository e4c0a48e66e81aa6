import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { AddKnowledgeBody, KnowledgeDocumentResponse, KnowledgeError, MAX_TEXT_CHARS } from '../../../src/features/knowledge/model'

describe('request schema', () => {
  test('takes either { url } or { text, title? }', () => {
    expect(Value.Check(AddKnowledgeBody, { url: 'https://example.com/faq' })).toBe(true)
    expect(Value.Check(AddKnowledgeBody, { text: 'We open at nine.' })).toBe(true)
    expect(Value.Check(AddKnowledgeBody, { text: 'We open at nine.', title: 'Hours' })).toBe(true)
  })

  test('refuses both at once, extra fields, empty values and over-long text', () => {
    expect(Value.Check(AddKnowledgeBody, { url: 'https://example.com', text: 'x' })).toBe(false)
    expect(Value.Check(AddKnowledgeBody, { url: 'https://example.com', title: 'x' })).toBe(false)
    expect(Value.Check(AddKnowledgeBody, { text: 'x', extra: 1 })).toBe(false)
    expect(Value.Check(AddKnowledgeBody, { text: '' })).toBe(false)
    expect(Value.Check(AddKnowledgeBody, {})).toBe(false)
    expect(Value.Check(AddKnowledgeBody, { text: 'x'.repeat(MAX_TEXT_CHARS) })).toBe(true)
    expect(Value.Check(AddKnowledgeBody, { text: 'x'.repeat(MAX_TEXT_CHARS + 1) })).toBe(false)
  })
})

describe('response schema', () => {
  test('describes a failed URL document', () => {
    const doc = {
      id: 'doc_0123456789abcdef',
      title: 'example.com/app',
      type: 'url',
      source: 'https://example.com/app',
      status: 'failed',
      error: 'the page needs JavaScript to show its content, so it cannot be read',
      createdAt: '2026-03-01T10:00:00.000Z',
      passages: 0,
    }
    expect(Value.Check(KnowledgeDocumentResponse, doc)).toBe(true)
    expect(Value.Check(KnowledgeDocumentResponse, { ...doc, status: 'pending' })).toBe(false)
  })
})

test('KnowledgeError carries status and field for the HTTP kernel', () => {
  const err = new KnowledgeError('text is too long', 400, 'text')
  expect(err).toBeInstanceOf(Error)
  expect(err).toMatchObject({ name: 'KnowledgeError', status: 400, field: 'text', message: 'text is too long' })
})
