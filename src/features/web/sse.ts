/**
 * The reply as Server-Sent Events (the WHATWG format: `event:` and `data:` lines, a blank line per
 * event), streamed while the model writes: `accepted` (the visitor's message is stored), `token`
 * for each piece of the reply, then `reply` (the whole stored reply) — or `silent` when a teammate
 * has the conversation, `unavailable` when the account cannot pay for a reply (the visitor is told
 * only that; the message is kept for the team), or `error` when the model failed mid-turn. The
 * stream ends after the last.
 */

import { apiErrorOf } from '../../http/refusals'
import type { Logger } from '../../logger'
import { type Accepted, UNAVAILABLE } from './service'

const encoder = new TextEncoder()
const frame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

export function replyStream(accepted: Accepted, headers: Record<string, string>, logger: Logger): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      // A visitor who closes the tab stops reading; the reply is still written and stored (it shows on resume).
      let open = true
      const send = (event: string, data: unknown) => {
        if (!open) return
        try {
          controller.enqueue(frame(event, data))
        } catch {
          open = false
        }
      }
      send('accepted', { conversationId: accepted.conversationId, messageId: accepted.messageId })
      if (!accepted.answering) {
        send('silent', { reason: 'a person from the team has this conversation and will answer' })
      } else {
        try {
          const reply = await accepted.answer((text) => send('token', { text }))
          if (reply.messageId) send('reply', reply)
          else if (reply.unavailable) send('unavailable', { reason: UNAVAILABLE })
          else send('silent', { reason: 'a person from the team has this conversation and will answer' })
        } catch (err) {
          const refused = apiErrorOf(err)
          if (!refused) logger.warn({ err, conversation: accepted.conversationId }, 'a website chat reply failed')
          send('error', { error: refused ? refused.message : 'the agent could not answer; try again', status: refused?.status ?? 500 })
        }
      }
      if (open) controller.close()
    },
  })
  return new Response(body, { status: 200, headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } })
}

/**
 * Keep-alive comment every 25 s on an idle events stream: under the 30–60 s idle timeouts of common
 * proxies and load balancers (nginx 60 s, AWS ALB 60 s, Heroku 55 s).
 */
export const KEEPALIVE_MS = 25_000

/** A long-lived stream of the team's messages; `follow` subscribes and resolves to the unsubscribe. */
export function eventStream(follow: (deliver: (m: unknown) => void) => Promise<() => Promise<void>>, headers: Record<string, string>): Response {
  let stop: (() => Promise<void>) | null = null
  let timer: ReturnType<typeof setInterval> | null = null
  const end = () => {
    if (timer) clearInterval(timer)
    timer = null
    void stop?.().catch(() => {})
    stop = null
  }
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const push = (chunk: Uint8Array) => {
        try {
          controller.enqueue(chunk)
        } catch {
          end() // the visitor went away
        }
      }
      stop = await follow((m) => push(frame('message', m)))
      push(frame('ready', {}))
      timer = setInterval(() => push(encoder.encode(': keep-alive\n\n')), KEEPALIVE_MS)
    },
    cancel: end,
  })
  return new Response(body, { status: 200, headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } })
}
