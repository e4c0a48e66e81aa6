/**
 * Server-Sent Events for the OpenAI and Anthropic adapters, parsed by `eventsource-parser` (the
 * WHATWG "event stream interpretation": LF, CRLF or CR line ends, split across chunks or not; `:`
 * comment lines as keep-alives; several `data:` lines joined with "\n"; a leading BOM dropped).
 * This file only adapts it to a byte stream: one `{ event, data }` per dispatched event. An event
 * not closed by a blank line when the bytes end is dropped, as the standard says: a cut stream
 * must not look like a complete last event.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'

export interface SseEvent {
  /** The `event:` field, or "message" when the server sent none (OpenAI never sends one). */
  event: string
  data: string
  id?: string
}

/**
 * The parser may not buffer past this (a line, or an event's data lines, not yet closed). 1 MiB:
 * vendors send a few tokens per event and even a large tool call's arguments are a few KB, so more
 * means a broken or hostile server.
 */
export const MAX_LINE_CHARS = 1 << 20

export class SseError extends Error {
  override readonly name = 'SseError'
}

type Source = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>

async function* chunksOf(source: Source): AsyncGenerator<Uint8Array> {
  if (!(source instanceof ReadableStream)) {
    yield* source
    return
  }
  const reader = source.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      if (value) yield value
    }
  } finally {
    reader.releaseLock()
  }
}

export async function* parseSse(source: Source): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder() // UTF-8; `stream: true` keeps split multi-byte characters
  const ready: SseEvent[] = []
  let overflow = false
  const parser = createParser({
    maxBufferSize: MAX_LINE_CHARS,
    onEvent: (m: EventSourceMessage) => void ready.push({ event: m.event || 'message', data: m.data, ...(m.id !== undefined ? { id: m.id } : {}) }),
    // Unknown fields and `retry` are ignored (we never reconnect an LLM stream); only an overflow stops us.
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded') overflow = true
    },
  })
  const drain = function* (): Generator<SseEvent> {
    if (overflow) throw new SseError('an event-stream line exceeded 1 MiB')
    while (ready.length) yield ready.shift()!
  }
  for await (const chunk of chunksOf(source)) {
    parser.feed(decoder.decode(chunk, { stream: true }))
    yield* drain()
  }
  const tail = decoder.decode()
  if (tail) parser.feed(tail)
  yield* drain()
}
