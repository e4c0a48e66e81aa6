/**
 * One live pocketsphinx decoder on its own thread (decoder-pool.ts explains why). Messages are
 * handled in order, so a `finalize` ends exactly the audio sent before it, and a `reset` drops an
 * abandoned utterance before the next holder's audio. Audio and answers carry the lease they
 * belong to, so a partial of the last holder's audio never reaches the next one.
 */
import { getPriority, setPriority } from 'node:os'
import { DECODER_NICE, MAX_NICE } from './decoder-priority'
import { Decoder, type SphinxPaths } from './pocketsphinx-ffi'

// Decoding yields the CPU to the service's event loop (DECODER_NICE says why).
try {
  setPriority(Math.min(MAX_NICE, getPriority() + DECODER_NICE))
} catch {
  // A platform without per-thread priority: the decoder runs at the service's own.
}

export type ToDecoder =
  | { t: 'init'; paths: SphinxPaths }
  | { t: 'audio'; lease: number; pcm: Int16Array }
  | { t: 'finalize'; lease: number }
  /** Drop the current utterance: the decoder goes to another holder. */
  | { t: 'reset' }
  | { t: 'close' }

export type FromDecoder =
  | { t: 'ready'; initMs: number }
  | { t: 'partial'; lease: number; text: string }
  | { t: 'final'; lease: number; text: string; ms: number }
  /** The decoder cannot go on (its model did not load, a library call failed): the pool replaces it. */
  | { t: 'error'; message: string }
  /** Answers `close`: `ps_free` ran. */
  | { t: 'freed' }

declare const self: Worker
const send = (m: FromDecoder) => self.postMessage(m)

let decoder: Decoder | null = null
let partial = ''
/**
 * A partial is read every 200 ms of audio, not every 20 ms frame: `ps_get_hyp` walks the
 * utterance's best path back from its end, a fifth or more of a frame's decoding with the library's
 * default search (docs/benchmarks.md), and nothing needs the live words sooner (turns are not judged
 * by this engine's words).
 */
const PARTIAL_SAMPLES = 3_200
let sincePartial = 0

self.onmessage = (event: MessageEvent<ToDecoder>) => {
  const m = event.data
  try {
    if (m.t === 'init') {
      const start = performance.now()
      decoder = new Decoder(m.paths)
      send({ t: 'ready', initMs: performance.now() - start })
    } else if (m.t === 'close') {
      decoder?.free()
      decoder = null
      // The pool terminates this worker once it hears this.
      send({ t: 'freed' })
    } else if (!decoder) {
      // Init failed and was reported: the pool is replacing this thread.
    } else if (m.t === 'audio') {
      decoder.process(m.pcm)
      sincePartial += m.pcm.length
      if (sincePartial < PARTIAL_SAMPLES) return
      sincePartial = 0
      const text = decoder.hypothesis()
      if (text && text !== partial) send({ t: 'partial', lease: m.lease, text })
      partial = text
    } else if (m.t === 'finalize') {
      const start = performance.now()
      const text = decoder.finish()
      partial = ''
      sincePartial = 0
      send({ t: 'final', lease: m.lease, text, ms: performance.now() - start })
    } else if (m.t === 'reset') {
      decoder.finish()
      partial = ''
      sincePartial = 0
    }
  } catch (err) {
    // A decoder whose library call failed is not trusted again: freed, and the pool replaces the thread.
    try {
      decoder?.free()
    } catch {}
    decoder = null
    send({ t: 'error', message: (err as Error).message })
  }
}
