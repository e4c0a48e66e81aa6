/**
 * HTTP plumbing shared by the vendor adapters: base-URL policy, deadlines, error mapping, and
 * turning a streamed response into SSE events. Vendor wire formats live in openai.ts/anthropic.ts.
 *
 * Deadlines are enforced here, by racing every wait against a timer, rather than trusting the
 * runtime to surface an abort inside a pending body read.
 */

import { checkedBaseUrl } from '../../net/base-url'
import { errorFromResponse, LlmError, protocolError } from './errors'
import { parseSse, SseError, type SseEvent } from './sse'

/** The part of `fetch` we use; tests and BYOK verification may pass their own. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

/**
 * Longest wait for response headers. 20 s: hosted APIs usually start answering in 0.3–3 s and
 * queue for several seconds under load; past 20 s a caller on the phone has given up, and the
 * engine would rather fail over or apologise than keep the line silent.
 */
export const HEADERS_TIMEOUT_MS = 20_000
/**
 * Longest silence between chunks once the answer streams. 15 s: tokens arrive every few tens of
 * milliseconds and Anthropic sends `ping` events to keep quiet streams alive, so 15 s without a
 * byte means a stuck stream, not a slow one.
 */
export const IDLE_TIMEOUT_MS = 15_000
/** Model listing is an interactive BYOK check from the console; 10 s is what a person will wait. */
export const LIST_MODELS_TIMEOUT_MS = 10_000

export interface Endpoint {
  provider: string
  /** Human name used in messages ("OpenAI", "Anthropic", "the model server at host"). */
  label: string
  fetch: FetchLike
  /** Strings that must never appear in an error message (the API key). */
  secrets: (string | undefined)[]
  headersTimeoutMs: number
  idleTimeoutMs: number
}

/** The base-URL rule (net/base-url.ts), refused as the adapters' own error. */
export function checkBaseUrl(provider: string, raw: string): string {
  const checked = checkedBaseUrl(raw)
  if ('refused' in checked) throw new LlmError({ kind: 'bad_request', provider, message: checked.refused })
  return checked.url
}

/** Races `p` against a deadline and the caller's signal; either loss aborts `ctl` (the request). */
function guard<T>(p: Promise<T>, ms: number, onTimeout: () => LlmError, ctl: AbortController, ep: Endpoint, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
    const onAbort = () => {
      done()
      ctl.abort()
      reject(aborted(ep))
    }
    const timer = setTimeout(() => {
      done()
      ctl.abort()
      reject(onTimeout())
    }, ms)
    if (signal?.aborted) return onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    p.then(
      (v) => {
        done()
        resolve(v)
      },
      (e) => {
        done()
        reject(e)
      },
    )
  })
}

const aborted = (ep: Endpoint) => new LlmError({ kind: 'aborted', provider: ep.provider, message: `The request to ${ep.label} was cancelled.` })

const unreachable = (ep: Endpoint, url: string, cause: unknown) =>
  new LlmError({
    kind: 'unavailable',
    provider: ep.provider,
    message: `Could not reach ${ep.label} at ${new URL(url).host}.`,
    cause,
  })

interface RequestOpts {
  signal?: AbortSignal
  timeoutMs?: number
}

/** Sends the request and returns a 2xx response, or throws the mapped LlmError. */
async function send(ep: Endpoint, url: string, init: RequestInit, ctl: AbortController, opts: RequestOpts): Promise<Response> {
  const ms = opts.timeoutMs ?? ep.headersTimeoutMs
  const timeout = () => new LlmError({ kind: 'timeout', provider: ep.provider, message: `${ep.label} did not start answering within ${ms} ms.` })
  let res: Response
  try {
    // redirect: manual — following one would hand the API key to whatever host it names.
    res = await guard(ep.fetch(url, { ...init, signal: ctl.signal, redirect: 'manual' }), ms, timeout, ctl, ep, opts.signal)
  } catch (e) {
    if (e instanceof LlmError) throw e
    throw unreachable(ep, url, e)
  }
  if (res.status >= 300 && res.status < 400) {
    void res.body?.cancel().catch(() => {})
    throw new LlmError({
      kind: 'bad_request',
      provider: ep.provider,
      status: res.status,
      message: `${ep.label} answered with a redirect (HTTP ${res.status}); set the base URL to the final address.`,
    })
  }
  if (!res.ok) throw await guard(errorFromResponse(ep.provider, ep.label, res, ep.secrets), ms, timeout, ctl, ep, opts.signal)
  return res
}

/** POSTs a JSON body and yields the SSE events of the streamed answer. */
export async function* postForEvents(ep: Endpoint, url: string, headers: Record<string, string>, body: unknown, opts: RequestOpts): AsyncGenerator<SseEvent> {
  if (opts.signal?.aborted) throw aborted(ep)
  const ctl = new AbortController()
  const res = await send(ep, url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) }, ctl, opts)
  const type = res.headers.get('content-type') ?? ''
  if (!res.body || !type.toLowerCase().includes('text/event-stream')) {
    void res.body?.cancel().catch(() => {})
    throw protocolError(ep.provider, `${ep.label} answered with "${type || 'no content type'}" instead of an event stream.`)
  }
  const reader = res.body.getReader()
  const idleMs = opts.timeoutMs ?? ep.idleTimeoutMs
  const idle = () => new LlmError({ kind: 'timeout', provider: ep.provider, message: `${ep.label} went silent for more than ${idleMs} ms in the middle of an answer.` })
  let finished = false
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (;;) {
      let r: { done: boolean; value?: Uint8Array }
      try {
        r = await guard<{ done: boolean; value?: Uint8Array }>(reader.read(), idleMs, idle, ctl, ep, opts.signal)
      } catch (e) {
        if (e instanceof LlmError) throw e
        throw new LlmError({ kind: 'unavailable', provider: ep.provider, message: `The connection to ${ep.label} broke in the middle of an answer.`, cause: e })
      }
      if (r.done) return
      if (r.value) yield r.value
    }
  }
  try {
    yield* parseSse(chunks())
    finished = true
  } catch (e) {
    if (e instanceof SseError) throw protocolError(ep.provider, `${ep.label} sent a malformed event stream: ${e.message}.`, e)
    throw e
  } finally {
    if (!finished) {
      ctl.abort()
      reader.cancel().catch(() => {})
    }
  }
}

/** GETs JSON (model lists). */
export async function getJson(ep: Endpoint, url: string, headers: Record<string, string>, opts: RequestOpts): Promise<unknown> {
  if (opts.signal?.aborted) throw aborted(ep)
  const ctl = new AbortController()
  const ms = opts.timeoutMs ?? LIST_MODELS_TIMEOUT_MS
  const res = await send(ep, url, { method: 'GET', headers: { ...headers, accept: 'application/json' } }, ctl, { ...opts, timeoutMs: ms })
  const timeout = () => new LlmError({ kind: 'timeout', provider: ep.provider, message: `${ep.label} did not finish answering within ${ms} ms.` })
  let text: string
  try {
    text = await guard(res.text(), ms, timeout, ctl, ep, opts.signal)
  } catch (e) {
    if (e instanceof LlmError) throw e
    throw unreachable(ep, url, e)
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw protocolError(ep.provider, `${ep.label} answered the model list with something other than JSON.`, e)
  }
}

/** Parses one JSON event payload, or throws a protocol error naming the vendor. */
export function parseData(ep: Endpoint, data: string): Record<string, unknown> {
  try {
    const v = JSON.parse(data)
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
  } catch (e) {
    throw protocolError(ep.provider, `${ep.label} sent an event that is not valid JSON.`, e)
  }
  throw protocolError(ep.provider, `${ep.label} sent an event that is not a JSON object.`)
}

/** Tool-call arguments: a JSON object, or nothing (a tool without parameters). */
export function parseArguments(ep: Endpoint, name: string, raw: string): Record<string, unknown> {
  if (raw.trim() === '') return {}
  let v: unknown
  try {
    v = JSON.parse(raw)
  } catch (e) {
    throw protocolError(ep.provider, `${ep.label} called the tool "${name}" with arguments that are not valid JSON.`, e)
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    throw protocolError(ep.provider, `${ep.label} called the tool "${name}" with arguments that are not a JSON object.`)
  }
  return v as Record<string, unknown>
}
