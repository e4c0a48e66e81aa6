/**
 * The operator console: one bearer token (CONSOLE_TOKEN), compared in constant time. A `derive`
 * so it runs before body validation (401 comes before 400).
 */

import { timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { notThere, unrecognised } from '../refusals'
import { bodyRefusal } from './body-check'

/** The workspace behind a console path's `{ws}` (a developer's `ws_` or a customer's `org_` id); null when none. */
export type ConsoleWorkspaceLookup<W> = (id: string) => Promise<W | null>

/** Throws 401 unless the request carries the console token. */
export function checkConsoleToken(token: string, request: Request): void {
  // Never an open door: an empty expected token matches an empty header.
  if (token.length === 0) throw unrecognised('the console is not configured')
  const expected = Buffer.from(token)
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
  const given = Buffer.from(match?.[1] ?? '')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw unrecognised('missing or wrong console token')
  }
}

/**
 * The console context, plus `workspace: true`: the route's `:ws` resolved to the workspace (404
 * when there is none), after the token and the body are checked. The lookup is the tenancy
 * feature's; this file knows only its signature.
 */
export function consoleAuth<W>(token: string, lookup: ConsoleWorkspaceLookup<W>) {
  return new Elysia({ name: 'console-auth' })
    .derive({ as: 'scoped' }, ({ request }) => {
      checkConsoleToken(token, request)
      bodyRefusal(request)
      return {}
    })
    .macro({
      workspace: {
        async resolve({ params }) {
          const id = (params as Record<string, string | undefined>).ws ?? ''
          const workspace = await lookup(id)
          if (!workspace) throw notThere(`workspace ${id} not found`)
          return { workspace }
        },
      },
    })
}
