/**
 * Local speech-to-text with pocketsphinx (Debian packages `pocketsphinx`, `pocketsphinx-en-us`):
 * no network, no key, English only, and weak on phone audio (its acoustic model is 16 kHz
 * wideband; docs/api/voice.md gives the measured word error rate). Each utterance is written as a
 * 16 kHz WAV and decoded by `pocketsphinx_continuous -infile`. The fallback of the live decoder
 * (pocketsphinx-live.ts) where libpocketsphinx or its model cannot be loaded: ~1 s per utterance.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WaveFile } from 'wavefile'
import { SpeechError, type SpeechToText, type SttCapabilities, type SttSession } from '../../voice/public'
import { DEBIAN_SPHINX, MODEL_FILES } from './pocketsphinx-ffi'
import { PronouncingDictionary } from './sounds-like'
import { UtteranceBuffer } from './utterance'

const RATE = 16_000
/** A minute of audio per utterance at most (older audio is dropped): nobody speaks one turn longer. */
const MAX_UTTERANCE_SAMPLES = 60 * RATE
/** Below ~100 ms there is no word to find: not worth a process. */
const MIN_UTTERANCE_SAMPLES = RATE / 10
/** Decoding runs ~0.3× real time here; a minute-long utterance stays well under 30 s. */
const DECODE_TIMEOUT_MS = 30_000

/** One process per utterance, on `finalize`: bare lower-case words, nothing while the caller speaks. */
export const SPHINX_CAPABILITIES: SttCapabilities = { streaming: false, interimWords: false, punctuation: false, endOfTurn: false, eagerEndOfTurn: false, wordTimings: false }

export class PocketsphinxStt implements SpeechToText {
  readonly name = 'pocketsphinx'

  private readonly dictionary = new PronouncingDictionary(MODEL_FILES(DEBIAN_SPHINX.modelDir).dict)

  constructor(private readonly binary = 'pocketsphinx_continuous') {}

  async open(): Promise<SttSession> {
    const utterance = new UtteranceBuffer(MAX_UTTERANCE_SAMPLES)
    const { binary, dictionary } = this
    return {
      sampleRate: RATE,
      capabilities: SPHINX_CAPABILITIES,
      // The live decoder's words, as weak: they judge no turn, and are matched on their sounds.
      turnCues: false,
      soundsLike: (text, phrases) => dictionary.soundsLike(text, phrases),
      push: (pcm) => utterance.push(pcm),
      async finalize(signal) {
        const pcm = utterance.take()
        if (pcm.length < MIN_UTTERANCE_SAMPLES) return ''
        return decode(binary, pcm, signal)
      },
      async close() {
        utterance.clear()
      },
    }
  }
}

async function decode(binary: string, pcm: Int16Array, signal?: AbortSignal): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sphinx-'))
  try {
    const wav = new WaveFile()
    wav.fromScratch(1, RATE, '16', pcm)
    const file = join(dir, 'utterance.wav')
    await writeFile(file, wav.toBuffer())
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(binary, ['-infile', file, '-logfn', '/dev/null'], { stdio: ['ignore', 'pipe', 'ignore'] })
      let out = ''
      const timer = setTimeout(() => child.kill('SIGKILL'), DECODE_TIMEOUT_MS)
      const abort = () => child.kill('SIGKILL')
      signal?.addEventListener('abort', abort, { once: true })
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.on('error', (err) => reject(new SpeechError('pocketsphinx', `could not run ${binary}: ${err.message}`)))
      child.on('close', (code) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', abort)
        if (signal?.aborted) return reject(new DOMException('transcription aborted', 'AbortError'))
        if (code !== 0) return reject(new SpeechError('pocketsphinx', `${binary} exited with ${code}`))
        resolve(
          out
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean)
            .join(' '),
        )
      })
    })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
