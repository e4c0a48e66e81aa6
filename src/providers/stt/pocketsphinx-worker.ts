/**
 * One live pocketsphinx decoder on its own thread (pocketsphinx-live.ts explains why). Messages
 * are handled in order, so a `finalize` ends exactly the audio sent before it.
 */
import { Decoder, type SphinxPaths } from './pocketsphinx-ffi'

export type ToDecoder =
  | { t: 'init'; paths: SphinxPaths }
  | { t: 'audio'; pcm: Int16Array }
  | { t: 'finalize'; id: number }
  /** Drop the current utterance: the decoder is parked for another call. */
  | { t: 'reset' }
  | { t: 'close' }

export type FromDecoder =
  | { t: 'ready'; initMs: number }
  | { t: 'partial'; text: string }
  | { t: 'final'; id: number; text: string; ms: number }
  | { t: 'error'; message: string }
  /** Answers `reset`. */
  | { t: 'parked' }
  /** Answers `close`: `ps_free` ran. */
  | { t: 'freed' }

declare const self: Worker
const send = (m: FromDecoder) => self.postMessage(m)

let decoder: Decoder | null = null
let failed: string | null = null
let partial = ''

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
      // The spawning thread terminates this worker once it hears this.
      send({ t: 'freed' })
    } else if (failed || !decoder) {
      // Init failed (already reported): answer finalizes so nobody waits for a decoder that is not there.
      if (m.t === 'finalize') send({ t: 'error', message: failed ?? 'the decoder is not initialised' })
      if (m.t === 'reset') send({ t: 'parked' })
    } else if (m.t === 'audio') {
      decoder.process(m.pcm)
      const text = decoder.hypothesis()
      if (text && text !== partial) send({ t: 'partial', text })
      partial = text
    } else if (m.t === 'finalize') {
      const start = performance.now()
      const text = decoder.finish()
      partial = ''
      send({ t: 'final', id: m.id, text, ms: performance.now() - start })
    } else if (m.t === 'reset') {
      decoder.finish()
      partial = ''
      send({ t: 'parked' })
    }
  } catch (err) {
    failed = (err as Error).message
    send({ t: 'error', message: failed })
  }
}
