/**
 * Answers with JSON that is already text (a body kept by the store beside its document,
 * Collection.view), with the content type `Response.json` gives: Elysia sends a string as it is,
 * as text/plain unless told otherwise.
 */
const JSON_TYPE = 'application/json;charset=utf-8'

export function jsonText(set: { headers: Record<string, unknown> }, text: string): string {
  set.headers['content-type'] = JSON_TYPE
  return text
}
