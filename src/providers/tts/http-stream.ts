/** Streams a vendor's raw PCM16 response body as samples, never splitting a sample across chunks. */
import { pcm16 } from './port'

export async function* pcmBody(res: Response, signal?: AbortSignal): AsyncIterable<Int16Array> {
  if (!res.body) return
  let carry: Uint8Array | null = null
  const reader = res.body.getReader()
  try {
    for (;;) {
      if (signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
      const { done, value } = await reader.read()
      if (done) break
      let bytes: Uint8Array = value
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
  } finally {
    reader.releaseLock()
  }
}

/** Waits for response headers at most `ms` (a stalled vendor must not hold a caller in silence). */
export function headersDeadline(ms: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms)
  return signal ? AbortSignal.any([signal, timeout]) : timeout
}
