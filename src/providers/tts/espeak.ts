/**
 * Local text-to-speech with espeak-ng (Debian package `espeak-ng`): no network, no key. It writes
 * a WAV to stdout (22,050 Hz mono 16-bit); the header is skipped and the samples stream as the
 * process produces them. Robotic, but intelligible on a phone line.
 */
import { spawn } from 'node:child_process'
import { pcmChunks } from './pcm-stream'
import type { SynthesisOptions, TextToSpeech } from './port'
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
    try {
      yield* pcmChunks(child.stdout as AsyncIterable<Uint8Array>, { signal: options.signal, skipBytes: WAV_HEADER })
    } finally {
      options.signal?.removeEventListener('abort', abort)
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }
}
