/**
 * A webhook receiver on loopback that holds every delivery `delayMs` before answering 200, and
 * records each one's event id and the message it reports: the slow endpoint deliveries queue
 * behind in the crash tests.
 */
import type { Server } from 'bun'

export interface SlowReceiver {
  server: Server<unknown>
  hits: { eventId: string; messageId: string }[]
}

export function startSlowReceiver(delayMs: number): SlowReceiver {
  const hits: SlowReceiver['hits'] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { data: { messageId: string } }
      await Bun.sleep(delayMs)
      hits.push({ eventId: req.headers.get('x-service-event-id') ?? '', messageId: body.data.messageId })
      return new Response('{}')
    },
  })
  return { server, hits }
}
