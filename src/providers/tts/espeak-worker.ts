/**
 * One espeak-ng synthesiser on its own thread (espeak-pool.ts says why): the library's own copy,
 * loaded once, speaking one sentence at a time in the order asked. The samples go back in pieces
 * of at least `PIECE` (the library hands them over every 48 ms of audio; fewer, larger messages
 * cost the event loop less), each piece's buffer transferred, not copied.
 */
import { EspeakLibrary } from './espeak-ffi'

export type ToSynth = { t: 'init'; library?: string } | { t: 'speak'; id: number; text: string; voice: string; wpm: number } | { t: 'close' }

export type FromSynth =
  | { t: 'ready'; sampleRate: number; initMs: number }
  | { t: 'audio'; id: number; pcm: Int16Array }
  /** The sentence is spoken; `ms`: the thread's time on it. */
  | { t: 'done'; id: number; ms: number }
  /** This sentence could not be spoken (a voice the library lacks); the thread goes on. */
  | { t: 'failed'; id: number; message: string }
  /** The library did not load or initialise: this thread cannot speak. */
  | { t: 'error'; message: string }
  | { t: 'closed' }

/** ~0.19 s at 22,050 Hz: the first piece of a sentence still leaves within a millisecond of asking. */
const PIECE = 4_096

declare const self: Worker
const send = (m: FromSynth, transfer?: Transferable[]) => self.postMessage(m, transfer ?? [])

let library: EspeakLibrary | null = null

self.onmessage = (event: MessageEvent<ToSynth>) => {
  const m = event.data
  if (m.t === 'init') {
    try {
      const start = performance.now()
      library = new EspeakLibrary(m.library)
      send({ t: 'ready', sampleRate: library.sampleRate, initMs: performance.now() - start })
    } catch (err) {
      send({ t: 'error', message: (err as Error).message })
    }
  } else if (m.t === 'close') {
    library?.close()
    library = null
    send({ t: 'closed' })
  } else if (m.t === 'speak') {
    if (!library) return send({ t: 'failed', id: m.id, message: 'the synthesiser did not start' })
    const start = performance.now()
    let held: Int16Array[] = []
    let heldSamples = 0
    const flush = () => {
      if (!heldSamples) return
      const pcm = held.length === 1 ? held[0]! : join(held, heldSamples)
      held = []
      heldSamples = 0
      send({ t: 'audio', id: m.id, pcm }, [pcm.buffer])
    }
    try {
      library.speak(m.text, m.voice, m.wpm, (pcm) => {
        held.push(pcm)
        heldSamples += pcm.length
        if (heldSamples >= PIECE) flush()
      })
      flush()
      send({ t: 'done', id: m.id, ms: performance.now() - start })
    } catch (err) {
      send({ t: 'failed', id: m.id, message: (err as Error).message })
    }
  }
}

function join(parts: Int16Array[], length: number): Int16Array {
  const out = new Int16Array(length)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
