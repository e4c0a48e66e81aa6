import { describe, expect, test } from 'bun:test'
import { describeSchemaError, fieldName } from '../../src/http/validation-message'

describe('fieldName', () => {
  test('paths become dotted names with indexes', () => {
    expect(fieldName('')).toBe('body')
    expect(fieldName('/name')).toBe('name')
    expect(fieldName('/widget/height')).toBe('widget.height')
    expect(fieldName('/steps/3/title')).toBe('steps[3].title')
    expect(fieldName('/0', 'body')).toBe('body[0]')
  })
})

describe('describeSchemaError', () => {
  const d = (schema: object, value: unknown, message = 'x') => describeSchemaError({ path: '/f', message, schema: schema as any, value })
  test('plain words for each rule', () => {
    expect(d({ type: 'string' }, undefined, 'Expected required property')).toBe('is required')
    expect(d({}, 1, 'Unexpected property')).toBe('is not a known field')
    expect(d({ type: 'string', minLength: 2, maxLength: 60 }, 'a')).toBe('must be from 2 to 60 characters')
    expect(d({ type: 'string', maxLength: 200 }, 'x'.repeat(201))).toBe('must be at most 200 characters')
    expect(d({ type: 'string' }, 5)).toBe('must be a string')
    expect(d({ type: 'integer', minimum: 420, maximum: 900 }, 1000)).toBe('must be from 420 to 900')
    expect(d({ type: 'integer' }, 1.5)).toBe('must be a whole number')
    expect(d({ type: 'boolean' }, 'yes')).toBe('must be true or false')
    expect(d({ anyOf: [{ const: 'a' }, { const: 'b' }] }, 'c')).toBe('must be one of "a", "b"')
    expect(d({ type: 'array', maxItems: 12 }, new Array(13).fill(0))).toBe('must have at most 12 items')
    expect(d({ anyOf: [{ type: 'integer', minimum: 60, maximum: 1200 }, { type: 'null' }] }, 30)).toBe('must be from 60 to 1200')
    expect(d({ type: 'string', pattern: '^#', description: 'a colour as #rrggbb' }, 'red')).toBe('must be a colour as #rrggbb')
  })
})

test('a nullable integer that Elysia wraps in a nested union names its range', () => {
  const schema = {
    anyOf: [
      {
        minimum: 0,
        maximum: 10000,
        anyOf: [
          { format: 'integer', type: 'string' },
          { minimum: 0, maximum: 10000, type: 'integer' },
        ],
      },
      { type: 'null' },
    ],
  }
  expect(describeSchemaError({ path: '/n', message: 'Expected union value', schema, value: -1 })).toBe('must be from 0 to 10000')
})
