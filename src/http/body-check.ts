/**
 * Route body schemas, checked by us before Elysia checks them. Elysia's ValidationError builds its
 * message by stringifying the whole body, indented, several times over (the value, each error's
 * value, a `found: ${value}` summary): a 1.8 MB body with one wrong field held the server for
 * 2.3 s, 7.5 s when nested 32 deep. Checked here first, a body that fails never reaches it: the
 * error carries the failing members (TypeBox's own errors, at most MAX_ERRORS) and the error
 * plugin words them exactly as it words Elysia's.
 *
 * The check mirrors Elysia's (http/json-body.ts hands it only JSON objects): the schema's top-level
 * defaults merged in first, and an optional body that is empty not checked. A body that passes
 * here is checked again by Elysia at no real cost; one that fails is refused at the point the
 * surface's request context says (after its credentials and workspace, see bodyRefusal).
 */
import { KindGuard, type TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import type { SchemaError } from './validation-message'

/** As many errors as Elysia reports (its MAX_ERRORS): the legacy 422 lists them all. */
export const MAX_ERRORS = 64

/** A body that failed its route's schema; the error plugin answers it as a validation failure. */
export class BodySchemaError extends Error {
  readonly type = 'body'
  constructor(readonly all: SchemaError[]) {
    super(all[0]?.message ?? 'invalid body')
    this.name = 'BodySchemaError'
  }
}

/** What a route table row tells about a route's body (Elysia's `app.routes`). */
export interface RouteRow {
  method: string
  path: string
  hooks?: { body?: unknown }
}

interface Compiled {
  check: TypeCheck<TSchema>
  defaults: Record<string, unknown> | null
  optional: boolean
}

const OPTIONAL = Symbol.for('TypeBox.Optional')

export class BodySchemas {
  private table: Map<string, TSchema> | null = null
  private readonly compiled = new Map<TSchema, Compiled>()

  /** `routes`: read on first use, once every surface is mounted. */
  constructor(private readonly routes: () => RouteRow[]) {}

  /** The failures of `body` against the schema of `method route`, or null when it passes or has none. */
  failures(method: string, route: string, body: unknown): SchemaError[] | null {
    const schema = this.schemaOf(method, route)
    if (!schema || typeof body !== 'object' || body === null) return null
    const c = this.compile(schema)
    if (c.optional && Object.keys(body).length === 0) return null
    const value = c.defaults ? Object.assign(structuredClone(c.defaults), body) : body
    if (c.check.Check(value)) return null
    const all: SchemaError[] = []
    for (const e of c.check.Errors(value)) {
      all.push({ path: e.path, message: e.message, schema: e.schema as SchemaError['schema'], value: e.value })
      if (all.length >= MAX_ERRORS) break
    }
    return all.length ? all : null
  }

  private schemaOf(method: string, route: string): TSchema | null {
    if (!this.table) {
      this.table = new Map()
      for (const r of this.routes()) {
        const body = r.hooks?.body
        if (KindGuard.IsSchema(body)) this.table.set(`${r.method} ${r.path}`, body)
      }
    }
    return this.table.get(`${method} ${route}`) ?? null
  }

  private compile(schema: TSchema): Compiled {
    let c = this.compiled.get(schema)
    if (!c) {
      const defaults = Value.Default(schema, {}) as unknown
      c = {
        check: TypeCompiler.Compile(schema),
        defaults: defaults && typeof defaults === 'object' && Object.keys(defaults).length ? (defaults as Record<string, unknown>) : null,
        optional: OPTIONAL in schema,
      }
      this.compiled.set(schema, c)
    }
    return c
  }
}

/** Failures found before the request context ran, thrown by it once its own checks pass. */
const pending = new WeakMap<Request, BodySchemaError>()

export function holdBodyRefusal(request: Request, error: BodySchemaError): void {
  pending.set(request, error)
}

/**
 * Throws the body's refusal, if it has one. The request contexts call it after their own checks,
 * so a wrong key or workspace is still answered before a wrong body.
 */
export function bodyRefusal(request: Request): void {
  const error = pending.get(request)
  if (error) throw error
}
