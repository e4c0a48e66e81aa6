/**
 * Turns a TypeBox validation error into a plain-words message that names the field
 * (`widget.height: must be from 420 to 900`), as docs/spec.md Errors rule 1 asks of every 400.
 */
/** The JSON Schema keywords read here; TypeBox's schemas carry more. */
export interface JsonSchema {
  [keyword: string]: unknown
  type?: string
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  description?: string
  pattern?: string
  format?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  minItems?: number
  maxItems?: number
}

export interface SchemaError {
  path: string
  message: string
  schema?: JsonSchema
  value?: unknown
}

/** `/steps/3/title` → `steps[3].title`; the empty path is the body itself. */
export function fieldName(path: string, root = 'body'): string {
  const parts = path.split('/').filter(Boolean)
  if (parts.length === 0) return root
  return parts
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('')
    .replace(/^\[/, `${root}[`)
}

function literals(schema: JsonSchema): unknown[] | null {
  const options = schema.anyOf ?? schema.oneOf
  if (Array.isArray(options) && options.every((o) => 'const' in o)) return options.map((o) => o.const)
  if (Array.isArray(schema.enum)) return schema.enum
  return null
}

function range(lo: number | undefined, hi: number | undefined, unit = ''): string {
  if (lo !== undefined && hi !== undefined) return `from ${lo} to ${hi}${unit}`
  if (lo !== undefined) return `at least ${lo}${unit}`
  return `at most ${hi}${unit}`
}

function fits(branch: JsonSchema, value: unknown): boolean {
  // A nested union (Elysia wraps integers as "integer or integer-looking string"): any branch.
  if (branch.type === undefined && Array.isArray(branch.anyOf)) return branch.anyOf.some((b) => fits(b, value))
  switch (branch.type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
    case 'integer':
      return typeof value === 'number'
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    case 'array':
      return Array.isArray(value)
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
    default:
      return false
  }
}

export function describeSchemaError(error: SchemaError): string {
  const schema = error.schema ?? {}
  const value = error.value
  if (/required property/i.test(error.message) || value === undefined) return 'is required'
  if (/unexpected property/i.test(error.message)) return 'is not a known field'
  const choices = literals(schema)
  if (choices) return `must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`
  // A union (nullable field, or Elysia's numeric coercion): explain the branch the value was aiming at.
  const options = schema.anyOf ?? schema.oneOf
  if (Array.isArray(options)) {
    const branch = options.find((b) => fits(b, value))
    if (branch) return describeSchemaError({ ...error, schema: branch })
  }
  const type = schema.type
  if (type === 'string') {
    if (typeof value !== 'string') return 'must be a string'
    if (schema.minLength !== undefined || schema.maxLength !== undefined) {
      const tooShort = schema.minLength !== undefined && value.length < schema.minLength
      const tooLong = schema.maxLength !== undefined && value.length > schema.maxLength
      if (tooShort || tooLong) {
        if (schema.minLength === schema.maxLength) return `must be exactly ${schema.minLength} characters`
        return `must be ${range(schema.minLength, schema.maxLength, ' characters')}`
      }
    }
    if (schema.description && schema.pattern) return `must be ${schema.description}`
    if (schema.format) return `must be a valid ${schema.format}`
    if (schema.pattern) return 'has an invalid format'
  }
  if (type === 'number' || type === 'integer') {
    if (typeof value !== 'number' || Number.isNaN(value)) return type === 'integer' ? 'must be a whole number' : 'must be a number'
    if (type === 'integer' && !Number.isInteger(value)) return 'must be a whole number'
    const lo = schema.minimum ?? schema.exclusiveMinimum
    const hi = schema.maximum ?? schema.exclusiveMaximum
    if (lo !== undefined || hi !== undefined) return `must be ${range(lo, hi)}`
  }
  if (type === 'boolean') return 'must be true or false'
  if (type === 'array') {
    if (!Array.isArray(value)) return 'must be an array'
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return `must have at most ${schema.maxItems} items`
    if (schema.minItems !== undefined && value.length < schema.minItems) return `must have at least ${schema.minItems} items`
  }
  if (type === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value))) return 'must be an object'
  if (type === 'null') return 'must be null'
  if (Array.isArray(schema.anyOf)) {
    const kinds = schema.anyOf.map((o) => o.type).filter(Boolean)
    if (kinds.length) return `must be ${kinds.join(' or ')}`
  }
  return error.message.charAt(0).toLowerCase() + error.message.slice(1)
}
