/**
 * The sandbox callee's script across instances. Its speech-to-text double (providers/stt/sandbox.ts)
 * "hears" the line the callee says it is speaking; with several instances (REDIS_URL) the callee runs
 * on the instance whose network placed the call while its media stream may land on another. So each
 * line said is published on one channel, and the instance holding that call's stream records it.
 */
import type { Coordination } from '../../../coordination/port'
import { SandboxScripts } from '../../../providers/stt/sandbox'

const CHANNEL = 'sandbox:said'

interface Said {
  callId: string
  text: string
  ms: number
  /** Where the line starts in the caller's stream (ms): the words follow the audio, however late this arrives. */
  at?: number
}

/** What the callees of this instance's network are given: says each line to every instance. */
export class RelayedScripts extends SandboxScripts {
  constructor(private readonly coordination: Coordination) {
    super()
  }

  override said(callId: string, text: string, ms = 0, at?: number): void {
    const said: Said = { callId, text, ms, ...(at !== undefined ? { at } : {}) }
    void this.coordination.publish(CHANNEL, JSON.stringify(said)).catch(() => {})
  }
}

/** Records the lines said on calls whose stream runs here (`here`) into this instance's `scripts`. */
export function hearRelayedScripts(coordination: Coordination, scripts: SandboxScripts, here: (callId: string) => boolean): Promise<() => Promise<void>> {
  return coordination.subscribe(CHANNEL, (message) => {
    let said: Said
    try {
      said = JSON.parse(message)
    } catch {
      return
    }
    if (typeof said?.callId === 'string' && typeof said.text === 'string' && here(said.callId))
      scripts.said(said.callId, said.text, Number(said.ms) || 0, typeof said.at === 'number' ? said.at : undefined)
  })
}
