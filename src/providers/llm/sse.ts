/**
 * A small Server-Sent Events parser (WHATWG HTML "event stream interpretation"), shared by the
 * OpenAI and Anthropic adapters. It yields one `{ event, data }` per dispatched event. Lines end in
 * LF, CRLF or CR (a CRLF may be split across chunks); `:` lines are comments (keep-alives);
 * several `data:` lines join with "\n". An event not closed by a blank line when the bytes end is
 * dropped, as the standard says: a cut stream must not look like a complete last event.
 */

export interface SseEvent {
  /** The `event:` field, or "message" when the server sent none (OpenAI never sends one). */
  event: string
  data: string
  id?: string
}

/**
 * A single line may not grow past this. 1 MiB: vendors send a few tokens per event and even a
 * large tool call's arguments are a few KB, so a longer line means a broken or hostile server.
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
  let buf = ''
  let pendingCr = false // the last chunk ended in CR: a leading LF in the next one belongs to it
  let first = true
  let data: string[] = []
  let event = ''
  let id: string | undefined

  function* take(): Generator<SseEvent> {
    for (;;) {
      const m = /[\r\n]/.exec(buf)
      if (!m) break
      const i = m.index
      let next = i + 1
      if (buf[i] === '\r') {
        if (i + 1 < buf.length) {
          if (buf[i + 1] === '\n') next = i + 2
        } else pendingCr = true
      }
      const line = buf.slice(0, i)
      buf = buf.slice(next)
      const ev = feed(line)
      if (ev) yield ev
    }
    if (buf.length > MAX_LINE_CHARS) throw new SseError('an event-stream line exceeded 1 MiB')
  }

  function feed(line: string): SseEvent | undefined {
    if (line === '') {
      const out = data.length ? { event: event || 'message', data: data.join('\n'), id } : undefined
      data = []
      event = ''
      return out
    }
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') data.push(value)
    else if (field === 'event') event = value
    else if (field === 'id' && !value.includes('\0')) id = value
    // `retry` and unknown fields are ignored: we never reconnect an LLM stream.
    return undefined
  }

  for await (const chunk of chunksOf(source)) {
    let text = decoder.decode(chunk, { stream: true })
    if (first && text.length) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      first = false
    }
    if (pendingCr && text.length) {
      if (text[0] === '\n') text = text.slice(1)
      pendingCr = false
    }
    buf += text
    yield* take()
  }
  buf += decoder.decode()
  yield* take()
}
