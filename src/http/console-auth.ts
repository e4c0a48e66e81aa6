/**
 * The operator console: one bearer token (CONSOLE_TOKEN), compared in constant time. A `derive`
 * so it runs before body validation (401 comes before 400).
 */
import { Elysia } from 'elysia'
import { requireJsonBody } from './json-body'
import { timingSafeEqual } from 'node:crypto'
import { unauthorized } from './errors'

export function consoleAuth(token: string) {
  const expected = Buffer.from(token)
  return new Elysia({ name: 'console-auth' }).derive({ as: 'scoped' }, ({ request, body }) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
    const given = Buffer.from(match?.[1] ?? '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw unauthorized('missing or wrong console token')
    }
    requireJsonBody(request, body)
    return {}
  })
}
