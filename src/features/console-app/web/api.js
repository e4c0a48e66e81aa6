// The console API with the console token (kept in this tab's sessionStorage, never in a URL), and
// the live stream: a one-use ticket bought with the token opens an EventSource for the workspace.
const KEY = 'console-token'

export const session = {
  token: () => sessionStorage.getItem(KEY),
  signIn: (token) => sessionStorage.setItem(KEY, token),
  signOut: () => sessionStorage.removeItem(KEY),
}

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message)
    this.status = status
    this.body = body
  }
}

/** `api('GET', '/workspaces')`: JSON in and out under /console. */
export async function api(method, path, body) {
  const headers = { authorization: `Bearer ${session.token() ?? ''}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`/console${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  let data = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = text
  }
  if (res.status === 401) window.dispatchEvent(new CustomEvent('console:unauthorized'))
  if (!res.ok) throw new ApiError(res.status, data?.error || `${res.status} ${res.statusText}`, data)
  return data
}

export const ws = (workspace, path = '') => `/workspaces/${encodeURIComponent(workspace)}${path}`

/**
 * One stream per page for the chosen workspace. Events: `call`, `pipeline`, `actor`, and `state`
 * (connecting, live, retrying). A dropped stream comes back with a new ticket (the old one is spent).
 */
export class LiveStream extends EventTarget {
  constructor() {
    super()
    this.workspace = null
    this.source = null
    this.state = 'off'
    this.retryMs = 500
    this.timer = null
    /** The service's clock less this browser's, from the stream's `ready` (its `now`). */
    this.skew = 0
  }

  /** The service's time now (a test clock, a skewed laptop): what call timers count on. */
  now() {
    return Date.now() + this.skew
  }

  /** Keeps the service's time from the stream's `ready`. */
  heard(data) {
    if (typeof data?.now === 'number') this.skew = data.now - Date.now()
  }

  open(workspace) {
    if (this.workspace === workspace && this.source) return
    this.close()
    this.workspace = workspace
    void this.connect()
  }

  close() {
    this.workspace = null
    clearTimeout(this.timer)
    this.source?.close()
    this.source = null
    this.setState('off')
  }

  /** `fn(detail)` for each event of `type`; returns the unsubscribe. */
  on(type, fn) {
    const listener = (e) => fn(e.detail)
    this.addEventListener(type, listener)
    return () => this.removeEventListener(type, listener)
  }

  setState(state) {
    this.state = state
    this.dispatchEvent(new CustomEvent('state', { detail: state }))
  }

  async connect() {
    const workspace = this.workspace
    if (!workspace) return
    this.setState('connecting')
    try {
      const { stream } = await api('POST', '/app/tickets', { workspace })
      if (this.workspace !== workspace) return
      const source = new EventSource(stream)
      this.source = source
      source.addEventListener('ready', (e) => {
        this.heard(JSON.parse(e.data))
        this.retryMs = 500
        this.setState('live')
      })
      for (const type of ['call', 'pipeline', 'actor']) {
        source.addEventListener(type, (e) => this.dispatchEvent(new CustomEvent(type, { detail: JSON.parse(e.data) })))
      }
      source.onerror = () => {
        // The ticket was used: EventSource cannot come back by itself with the same URL.
        source.close()
        if (this.source === source) this.retry()
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return this.setState('off')
      this.retry()
    }
  }

  retry() {
    this.source = null
    this.setState('retrying')
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.connect(), this.retryMs)
    this.retryMs = Math.min(this.retryMs * 2, 10_000)
  }
}

export const live = new LiveStream()
