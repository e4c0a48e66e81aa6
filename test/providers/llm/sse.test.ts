import { describe, expect, test } from 'bun:test'
import { MAX_LINE_CHARS, parseSse, SseError, type SseEvent } from '../../../src/providers/llm/sse'

const enc = new TextEncoder()

async function parse(parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  async function* src() {
    for (const p of parts) yield typeof p === 'string' ? enc.encode(p) : p
  }
  const out: SseEvent[] = []
  for await (const ev of parseSse(src())) out.push(ev)
  return out
}

describe('parseSse', () => {
  test('data-only events (OpenAI style) get the default event name', async () => {
    expect(await parse(['data: {"a":1}\n\ndata: [DONE]\n\n'])).toEqual([
      { event: 'message', data: '{"a":1}', id: undefined },
      { event: 'message', data: '[DONE]', id: undefined },
    ])
  })

  test('named events (Anthropic style), comments and unknown fields', async () => {
    const evs = await parse([': keep-alive\nevent: ping\ndata: {"type":"ping"}\nretry: 10\nfoo: bar\n\n'])
    expect(evs).toEqual([{ event: 'ping', data: '{"type":"ping"}', id: undefined }])
  })

  test('CRLF and lone CR line endings, including a CRLF split across chunks', async () => {
    const evs = await parse(['data: one\r', '\n\r', '\ndata: two\r\rdata: three\n\n'])
    expect(evs.map((e) => e.data)).toEqual(['one', 'two', 'three'])
  })

  test('multi-line data joins with newlines; no space after the colon is fine', async () => {
    const evs = await parse(['data:line1\ndata: line2\ndata\n\n'])
    expect(evs[0].data).toBe('line1\nline2\n')
  })

  test('events split at every byte, with multi-byte characters, parse the same', async () => {
    const all = enc.encode('\uFEFFevent: x\ndata: héllo ✓ 你好\n\n')
    const bytes = [...all].map((b) => new Uint8Array([b]))
    expect(await parse(bytes)).toEqual([{ event: 'x', data: 'héllo ✓ 你好', id: undefined }])
  })

  test('an event not closed by a blank line is dropped (a cut stream is not a complete event)', async () => {
    expect(await parse(['data: a\n\ndata: {"partial":'])).toHaveLength(1)
    expect(await parse(['data: a\n\ndata: whole-line\n'])).toHaveLength(1)
  })

  test('a blank line with no data dispatches nothing', async () => {
    expect(await parse(['event: x\n\n\n\n'])).toEqual([])
  })

  test('an endless line is refused', async () => {
    const big = `data: ${'x'.repeat(MAX_LINE_CHARS + 10)}`
    await expect(parse([big])).rejects.toBeInstanceOf(SseError)
  })

  test('reads a ReadableStream too', async () => {
    const rs = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('data: 1\n\n'))
        c.close()
      },
    })
    const out: SseEvent[] = []
    for await (const e of parseSse(rs)) out.push(e)
    expect(out.map((e) => e.data)).toEqual(['1'])
  })
})
