/**
 * Schema types for JSON bodies. Elysia's `t.Integer` is a transform that also accepts text that
 * reads as an integer ("12", and "   " or "\t" as 0, "0x10" as 16, "1e3" as 1000): right for path
 * parameters and query strings, which are text, wrong for JSON, where a string where a number
 * belongs is the caller's mistake (docs/spec.md Errors: a 400 naming the field). Body schemas use
 * these; `t.Number` and `t.Boolean` are not coerced inside a body and stay as they are.
 * test/e2e/body-types.test.ts walks every route's body schema and refuses a coercing type.
 */
import { type IntegerOptions, Type } from '@sinclair/typebox'

/** An integer in a JSON body: a JSON number, never a string. */
export const BodyInt = (options?: IntegerOptions) => Type.Integer(options)

/**
 * The body of an action that takes none: absent or `{}`. A member is refused as the unknown field
 * it is (400 naming it, legacy 422), as on every other route, instead of being ignored.
 */
export const NoBody = Type.Optional(Type.Object({}, { additionalProperties: false, description: 'none: send no body or `{}`' }))
