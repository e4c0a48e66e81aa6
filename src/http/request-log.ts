/**
 * Request ids and one structured log line per request. The id comes from a sane incoming
 * `x-request-id` (so a proxy's id follows the request) or is made here, and is echoed back.
 * The per-request log hook is only installed when `info` is enabled: at `warn` and above there is
 * nothing to write, and a hook that returns at once still costs every request.
 */
import { Elysia } from 'elysia'
import { randomId } from '../ids'
import type { Logger } from '../logger'

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,64}$/
// A per-process random prefix and a counter: unique across instances and restarts, and far
// cheaper per request than fresh randomness.
const PROCESS_PREFIX = `req_${randomId(8)}`
let counter = 0
const nextRequestId = () => `${PROCESS_PREFIX}${(counter++).toString(36)}`

/**
 * The status the client was sent. An answer made as a Response (the error plugin's, a stream's)
 * carries its own; `set.status` then still holds what Elysia had in mind: 422 for a validation
 * failure we answer 400, 200 for a path no route matched.
 */
function sentStatus(answer: unknown, status: number | string | undefined): number | string | undefined {
  return answer instanceof Response ? answer.status : status
}

export function requestLog(logger: Logger) {
  const plugin = new Elysia({ name: 'request-log' })
  if (!logger.isLevelEnabled('info')) {
    return plugin.onRequest(({ request, set }) => {
      const incoming = request.headers.get('x-request-id')
      set.headers['x-request-id'] = incoming && INCOMING_ID.test(incoming) ? incoming : nextRequestId()
    })
  }
  const started = new WeakMap<Request, number>()
  return plugin
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get('x-request-id')
      set.headers['x-request-id'] = incoming && INCOMING_ID.test(incoming) ? incoming : nextRequestId()
      started.set(request, performance.now())
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
      const t0 = started.get(request)
      logger.info(
        {
          requestId: (set.headers as Record<string, string>)['x-request-id'],
          method: request.method,
          path: new URL(request.url).pathname,
          status: sentStatus(responseValue, set.status),
          ms: t0 === undefined ? undefined : Math.round((performance.now() - t0) * 10) / 10,
        },
        'request',
      )
    })
}
