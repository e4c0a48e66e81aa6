/**
 * One error type for every refusal the service makes. Services throw it (it carries no Elysia
 * types); the error plugin shapes it per surface: v1/console `{ error }`, legacy `{ detail, status }`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra members merged into the v1 body (e.g. `state`, `numbers`, `deletedAt`). */
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** 400 whose message starts with the offending field, as docs/spec.md Errors rule 1 asks. */
export const badRequest = (field: string, message: string) => new ApiError(400, `${field}: ${message}`, { field })
export const unauthorized = (message = 'missing, wrong or revoked API key') => new ApiError(401, message)
export const forbidden = (message: string) => new ApiError(403, message)
export const notFound = (message: string) => new ApiError(404, message)
export const conflict = (message: string, extra?: Record<string, unknown>) => new ApiError(409, message, extra)

/** A required text that is only spaces is as good as missing: refused like an empty one. */
export function notBlank(value: string, field: string): string {
  if (value.trim() === '') throw badRequest(field, 'must not be blank')
  return value
}
