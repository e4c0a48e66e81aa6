/**
 * Local text-to-speech with espeak-ng (Debian package `espeak-ng`): no network, no key. It writes
 * a WAV to stdout (22,050 Hz mono 16-bit); the header is skipped and the samples stream as the
 * process produces them. Robotic, but intelligible on a phone line.
 */
import { spawn } from 'node:child_process'
import { pcm16, type SynthesisOptions, type TextToSpeech } from './port'
import { providerVoice } from './voices'

const RATE = 22_050
/** The canonical WAV header espeak-ng writes to stdout. */
const WAV_HEADER = 44
/** 175 words a minute: espeak's default is 175; phone callers follow 150–190 comfortably. */
const WORDS_PER_MINUTE = 175

export class EspeakTts implements TextToSpeech {
  readonly name = 'espeak'
  readonly sampleRate = RATE

  constructor(private readonly binary = 'espeak-ng') {}

  async *synthesize(text: string, options: SynthesisOptions): AsyncIterable<Int16Array> {
    const voice = providerVoice('espeak', options.voice)
    const child = spawn(this.binary, ['--stdout', '-v', voice, '-s', String(WORDS_PER_MINUTE), '--', text], { stdio: ['ignore', 'pipe', 'ignore'] })
    const abort = () => child.kill('SIGKILL')
    options.signal?.addEventListener('abort', abort, { once: true })
    let skipped = 0
    let carry: Uint8Array | null = null
    try {
      for await (const data of child.stdout as AsyncIterable<Buffer>) {
        if (options.signal?.aborted) break
        let bytes: Uint8Array = data
        if (skipped < WAV_HEADER) {
          const skip = Math.min(WAV_HEADER - skipped, bytes.length)
          skipped += skip
          bytes = bytes.subarray(skip)
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
    } finally {
      options.signal?.removeEventListener('abort', abort)
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    if (options.signal?.aborted) throw new DOMException('synthesis aborted', 'AbortError')
  }
}
