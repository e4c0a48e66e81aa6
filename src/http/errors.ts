/**
 * The HTTP answer a refusal makes: its status, message, the members beside the message and its
 * headers. Code refuses with `Refused` (src/refusals.ts); src/http/refusals.ts maps one to this, and
 * the error plugin shapes it per surface: v1/console `{ error }`, legacy `{ detail, status }`. Only
 * src/http imports it (`npm run deps`).
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
