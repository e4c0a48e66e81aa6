/**
 * The sandbox network's speech-to-text: its test double, never used for real calls. The sandbox
 * callee says which scripted line it is speaking (`said`), and the utterance that follows is
 * "transcribed" as exactly that line, so end-to-end tests are deterministic. Audio that arrives
 * with no line said (noise, a cough) transcribes as '' — the pipeline's false-interruption case.
 *
 * The script lives in this process: the callee connects to the instance that runs it, so its
 * media socket and this registry meet in one process.
 */
import type { SpeechToText, SttSession } from './port'

export class SandboxScripts {
  private readonly lines = new Map<string, string[]>()

  /** The callee on call `callId` starts saying `text`. */
  said(callId: string, text: string): void {
    const said = this.lines.get(callId) ?? []
    said.push(text)
    this.lines.set(callId, said)
  }

  /** Lines said since the last take. */
  take(callId: string): string {
    const said = this.lines.get(callId) ?? []
    this.lines.delete(callId)
    return said.join(' ')
  }

  forget(callId: string): void {
    this.lines.delete(callId)
  }
}

export class SandboxStt implements SpeechToText {
  readonly name = 'sandbox'

  constructor(
    private readonly scripts: SandboxScripts,
    private readonly callId: string,
  ) {}

  async open(): Promise<SttSession> {
    const { scripts, callId } = this
    let heardAudio = false
    return {
      sampleRate: 8_000,
      push() {
        heardAudio = true
      },
      async finalize() {
        if (!heardAudio) return ''
        heardAudio = false
        return scripts.take(callId)
      },
      async close() {
        scripts.forget(callId)
      },
    }
  }
}
