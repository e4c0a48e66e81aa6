/**
 * The operator console: one bearer token (CONSOLE_TOKEN), compared in constant time. A `derive`
 * so it runs before body validation (401 comes before 400).
 */
import { Elysia } from 'elysia'
import { timingSafeEqual } from 'node:crypto'
import { unauthorized } from './errors'

/** Throws 401 unless the request carries the console token. */
export function checkConsoleToken(token: string, request: Request): void {
  // Never an open door: an empty expected token matches an empty header.
  if (token.length === 0) throw unauthorized('the console is not configured')
  const expected = Buffer.from(token)
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
  const given = Buffer.from(match?.[1] ?? '')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw unauthorized('missing or wrong console token')
  }
}

export function consoleAuth(token: string) {
  return new Elysia({ name: 'console-auth' }).derive({ as: 'scoped' }, ({ request }) => {
    checkConsoleToken(token, request)
    return {}
  })
}
