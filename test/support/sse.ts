/** Reads a `text/event-stream` answer to its end: each event's name and parsed JSON data, in order (eventsource-parser). */
import { createParser } from 'eventsource-parser'
import { chunks } from './body'

export interface SseEvent {
  event: string
  data: any
}

export async function readEvents(res: Response, onEvent?: (e: SseEvent) => void): Promise<SseEvent[]> {
  const out: SseEvent[] = []
  const parser = createParser({
    onEvent(m) {
      const e = { event: m.event ?? 'message', data: JSON.parse(m.data) }
      out.push(e)
      onEvent?.(e)
    },
  })
  const decoder = new TextDecoder()
  for await (const chunk of chunks(res)) parser.feed(decoder.decode(chunk, { stream: true }))
  return out
}
