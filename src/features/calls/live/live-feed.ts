/**
 * Call updates as they happen, for watchers (the console app's live pages): a call row written
 * (status, transcript, latency, recording, analysis), the voice pipeline's state (listening,
 * thinking, speaking, interrupted), the call chart's state. Messages go over the coordination
 * port's channel `calls:updates`: in-process on one instance, through Redis across several, so a
 * watcher on any instance sees every call. A message names what changed; a watcher reads the row.
 *
 * Publishing costs nothing a call would notice: with the in-process adapter and no watcher in
 * this process it returns at once; otherwise one small message, never awaited by the writer.
 */
import type { Coordination } from '../../../coordination/port'
import type { Logger } from '../../../logger'
import type { CallTryDoc, CallTryRepo } from '../records/repository'

export const CALL_UPDATES_CHANNEL = 'calls:updates'

/** `at`: when the change was made (epoch ms), so a watcher can tell how late it sees it. */
export type CallUpdate =
  | { kind: 'row'; tryId: string; callId: string; workspaceId: string; at: number }
  | { kind: 'pipeline'; callId: string; workspaceId: string; state: string; why?: string; at: number }
  | { kind: 'actor'; callId: string; state: string; at: number }

type Unstamped<U> = U extends unknown ? Omit<U, 'at'> : never

export class CallFeed {
  private localWatchers = 0

  constructor(
    private readonly coordination: Pick<Coordination, 'kind' | 'publish' | 'subscribe'>,
    private readonly logger: Logger,
  ) {}

  publish(update: Unstamped<CallUpdate>): void {
    if (this.coordination.kind === 'local' && this.localWatchers === 0) return
    const message = JSON.stringify({ ...update, at: Date.now() })
    this.coordination.publish(CALL_UPDATES_CHANNEL, message).catch((err) => this.logger.warn({ err }, 'could not publish a call update'))
  }

  /** Calls `handler` with every update from now on; resolves to the unsubscribe once listening. */
  async subscribe(handler: (update: CallUpdate) => void): Promise<() => Promise<void>> {
    this.localWatchers++
    try {
      const stop = await this.coordination.subscribe(CALL_UPDATES_CHANNEL, (raw) => handler(JSON.parse(raw) as CallUpdate))
      let stopped = false
      return async () => {
        if (stopped) return
        stopped = true
        this.localWatchers--
        await stop()
      }
    } catch (err) {
      this.localWatchers--
      throw err
    }
  }
}

/** The call rows, telling the feed after each write lands (every writer of a row goes through this). */
export function watchedTries(tries: CallTryRepo, feed: CallFeed): CallTryRepo {
  const told = (doc: CallTryDoc | null) => {
    if (doc) feed.publish({ kind: 'row', tryId: doc.id, callId: doc.callId, workspaceId: doc.workspaceId })
    return doc
  }
  return new Proxy(tries, {
    get(target, prop) {
      if (prop === 'update') return async (id: string, set: Record<string, unknown>, unset?: string[]) => told(await target.update(id, set, unset))
      if (prop === 'insert') return async (doc: CallTryDoc) => told(await target.insert(doc))!
      const value = Reflect.get(target, prop, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
