/**
 * Names the parameter in the 400 for integer query members (`limit`, `days`, `rows`), as SPEC.md
 * Errors rule 1 asks. Elysia 1.4 checks coerced query integers one property at a time and reports
 * them without the property's name, so the kernel's error plugin can only say `property: …`.
 * Until the kernel names them itself, these routes check their integer members in `transform`
 * (which runs before Elysia's validation), reading the bounds from the same schema, so the two
 * can never disagree. Delete this once src/http/error-plugin.ts handles `type: 'property'`.
 */
import type { TObject, TSchema } from '@sinclair/typebox'
import { badRequest } from '../../http/errors'

/** Elysia's `t.Integer` is a union of an integer and an integer-looking string, bounds on top. */
const isInteger = (s: TSchema): boolean =>
  s.type === 'integer' || (Array.isArray(s.anyOf) && s.anyOf.some((b: TSchema) => b.type === 'integer'))

export function checkQueryIntegers(schema: TObject) {
  const members = Object.entries(schema.properties)
    .filter(([, s]) => isInteger(s))
    .map(([name, s]) => ({ name, min: s.minimum as number | undefined, max: s.maximum as number | undefined }))
  return ({ query }: { query: Record<string, unknown> }) => {
    for (const { name, min, max } of members) {
      const raw = query[name]
      if (raw === undefined) continue
      const value = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : typeof raw === 'number' ? raw : NaN
      if (!Number.isInteger(value) || (min !== undefined && value < min) || (max !== undefined && value > max)) {
        const range = min !== undefined && max !== undefined ? ` from ${min} to ${max}` : ''
        throw badRequest(name, `must be a whole number${range}`)
      }
    }
  }
}
