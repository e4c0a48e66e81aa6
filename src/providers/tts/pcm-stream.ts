/**
 * Raw 16-bit PCM arriving as bytes (a vendor's streamed body, a local engine's stdout) as samples,
 * never splitting a sample across chunks: an odd trailing byte waits for the next chunk.
 */
import { pcm16 } from '../../voice/public'

export async function* pcmChunks(source: AsyncIterable<Uint8Array>, options: { signal?: AbortSignal; skipBytes?: number } = {}): AsyncIterable<Int16Array> {
  let skip = options.skipBytes ?? 0
  let carry: Uint8Array | null = null
  for await (const chunk of source) {
    if (options.signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
    let bytes = chunk
    if (skip > 0) {
      const n = Math.min(skip, bytes.length)
      skip -= n
      bytes = bytes.subarray(n)
    }
    if (carry) {
      const joined = new Uint8Array(carry.length + bytes.length)
      joined.set(carry)
      joined.set(bytes, carry.length)
      bytes = joined
      carry = null
    }
    if (bytes.length % 2) {
      carry = bytes.slice(bytes.length - 1)
      bytes = bytes.subarray(0, bytes.length - 1)
    }
    if (bytes.length) yield pcm16(bytes.slice())
  }
  if (options.signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
}

/** A fetch response's body as samples. */
export function pcmBody(res: Response, signal?: AbortSignal): AsyncIterable<Int16Array> {
  if (!res.body) return pcmChunks((async function* () {})(), { signal })
  return pcmChunks(res.body, { signal })
}

/** Waits for response headers at most `ms` (a stalled vendor must not hold a caller in silence). */
export function headersDeadline(ms: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms)
  return signal ? AbortSignal.any([signal, timeout]) : timeout
}
