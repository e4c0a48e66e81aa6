/**
 * The console app's live stream: each open page holds one Server-Sent Events stream for its
 * workspace, and gets from it, as they happen on any instance (the calls feature's feed):
 * - `call`: the call as the console shows it, whenever its row is written (status, transcript,
 *   latency, recording, analysis);
 * - `pipeline`: `{ callId, state, why? }`, the voice pipeline's state (listening, thinking, speaking,
 *   interrupted, …) and why the turn-taking chart is there (the wait's rule, why the agent stopped);
 * - `actor`: `{ id: 'call:<id>', state }`, each stored move of the call's chart.
 * Every event carries `at`, when the change was made (epoch ms). `ready` opens the stream and a
 * comment every 15 s keeps proxies from closing it.
 *
 * The hub listens to the feed only while a stream is open. A row written many times in a burst
 * (a transcript growing word by word) is read once per burst: while a read is in flight, later
 * writes only mark it to be read again.
 */
import type { Clock } from '../../clock'
import type { Logger } from '../../logger'
import { type CallFeed, type CallReads, type CallUpdate, presentConsoleCall } from '../calls/public'

export const KEEPALIVE_MS = 15_000
/** Which workspace each call is in, for chart moves (their message names only the call); bounded. */
const KNOWN_CALLS = 10_000

interface Watcher {
  workspaceId: string
  send(event: string, data: unknown): void
}

const encoder = new TextEncoder()

export class LiveHub {
  private readonly watchers = new Set<Watcher>()
  private listening: Promise<() => Promise<void>> | null = null
  private readonly reading = new Map<string, { again: boolean; at: number }>()
  private readonly workspaceOf = new Map<string, string>()

  constructor(private readonly d: { feed: CallFeed; reads: CallReads; logger: Logger; clock: Clock }) {}

  get size(): number {
    return this.watchers.size
  }

  /** An SSE answer for `workspaceId`, open until the browser goes away. */
  async stream(workspaceId: string, headers: Record<string, string> = {}): Promise<Response> {
    let watcher: Watcher | null = null
    let timer: ReturnType<typeof setInterval> | null = null
    const end = () => {
      if (timer) clearInterval(timer)
      timer = null
      if (watcher) this.leave(watcher)
      watcher = null
    }
    const body = new ReadableStream<Uint8Array>({
      start: async (controller) => {
        const push = (chunk: string) => {
          try {
            controller.enqueue(encoder.encode(chunk))
          } catch {
            end() // the page went away
          }
        }
        watcher = { workspaceId, send: (event, data) => push(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`) }
        await this.join(watcher)
        // `retry`: how long an EventSource waits before reconnecting (it needs a new ticket then).
        // `now`: the service's clock (a manual one in tests; events' `at` are the wall clock's), which a page's call timers count on.
        push(`retry: 1000\nevent: ready\ndata: ${JSON.stringify({ workspace: workspaceId, now: this.d.clock.now() })}\n\n`)
        timer = setInterval(() => push(': keep-alive\n\n'), KEEPALIVE_MS)
      },
      cancel: end,
    })
    return new Response(body, {
      headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
    })
  }

  private async join(watcher: Watcher): Promise<void> {
    this.watchers.add(watcher)
    this.listening ??= this.d.feed.subscribe((u) => this.onUpdate(u))
    await this.listening
  }

  private leave(watcher: Watcher): void {
    this.watchers.delete(watcher)
    if (this.watchers.size > 0 || !this.listening) return
    const listening = this.listening
    this.listening = null
    void listening.then((stop) => stop()).catch((err) => this.d.logger.warn({ err }, 'could not stop following call updates'))
  }

  /** Closes every stream's subscription (the service stops). */
  async close(): Promise<void> {
    this.watchers.clear()
    const listening = this.listening
    this.listening = null
    if (listening) await (await listening)()
  }

  private to(workspaceId: string, event: string, data: unknown): void {
    for (const w of this.watchers) if (w.workspaceId === workspaceId) w.send(event, data)
  }

  private watched(workspaceId: string): boolean {
    for (const w of this.watchers) if (w.workspaceId === workspaceId) return true
    return false
  }

  private remember(callId: string, workspaceId: string): void {
    if (this.workspaceOf.size >= KNOWN_CALLS) this.workspaceOf.delete(this.workspaceOf.keys().next().value!)
    this.workspaceOf.set(callId, workspaceId)
  }

  private onUpdate(u: CallUpdate): void {
    if (u.kind === 'pipeline') {
      this.remember(u.callId, u.workspaceId)
      this.to(u.workspaceId, 'pipeline', { callId: u.callId, state: u.state, ...(u.why ? { why: u.why } : {}), at: u.at })
    } else if (u.kind === 'row') {
      this.remember(u.callId, u.workspaceId)
      if (this.watched(u.workspaceId)) void this.readRow(u.tryId, u.at)
    } else void this.actorMoved(u.callId, u.state, u.at)
  }

  private async actorMoved(callId: string, state: string, at: number): Promise<void> {
    let workspaceId = this.workspaceOf.get(callId)
    if (!workspaceId) {
      const row = await this.d.reads.newest(callId).catch(() => null)
      if (!row) return
      workspaceId = row.workspaceId
      this.remember(callId, workspaceId)
    }
    this.to(workspaceId, 'actor', { id: `call:${callId}`, state, at })
  }

  private async readRow(tryId: string, at: number): Promise<void> {
    const pending = this.reading.get(tryId)
    if (pending) {
      // The read in flight may predate this write: read again after it, stamped with the oldest change it shows.
      if (!pending.again) pending.at = at
      pending.again = true
      return
    }
    const mark = { again: false, at }
    this.reading.set(tryId, mark)
    try {
      for (;;) {
        const changedAt = mark.at
        mark.again = false
        const row = await this.d.reads.byTry(tryId)
        if (row) this.to(row.workspaceId, 'call', { call: presentConsoleCall(row), at: changedAt })
        if (!mark.again) break
      }
    } catch (err) {
      this.d.logger.warn({ err, tryId }, 'could not read a call for the console stream')
    } finally {
      this.reading.delete(tryId)
    }
  }
}
