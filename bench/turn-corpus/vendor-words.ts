/**
 * The words the Deepgram fake says a corpus case's caller said, for bench:turn-taking's hosted
 * profile: exactly the script's, stretch by stretch as the vendor would finalise them.
 */
import { PHONE_RATE } from '../../src/voice/codecs'
import { voicedMs } from '../../test/fakes/deepgram'
import type { render } from './audio'
import type { Case } from './cases'

/** The Deepgram adapter's `endpointing` (src/providers/stt/deepgram.ts): a silence this long inside a piece ends the fake's stretch too. */
const VENDOR_ENDPOINTING_MS = 300
/** The fake's speech windows (test/fakes/deepgram.ts: 20 ms above 0.01 of full scale). */
const WINDOW = PHONE_RATE / 50
const voiced = (pcm: Int16Array, at: number) => {
  let sum = 0
  for (let i = at; i < at + WINDOW; i++) sum += pcm[i]! ** 2
  return Math.sqrt(sum / WINDOW) > 0.01 * 32768
}

/** Where a stretch of audio splits for the vendor (a silence of VENDOR_ENDPOINTING_MS or more between voiced windows), as sample offsets. */
function vendorSplits(pcm: Int16Array): number[] {
  const splits: number[] = []
  let silentFrom = -1
  let spoke = false
  for (let at = 0; at + WINDOW <= pcm.length; at += WINDOW) {
    if (!voiced(pcm, at)) {
      if (silentFrom < 0) silentFrom = at
      continue
    }
    if (spoke && silentFrom >= 0 && ((at - silentFrom) * 1000) / PHONE_RATE >= VENDOR_ENDPOINTING_MS) splits.push(at)
    silentFrom = -1
    spoke = true
  }
  return splits
}

/**
 * What a vendor says a case's caller said: one piece of text for each stretch of speech the
 * Deepgram fake finalises (at our Finalize at a pause, or at its own endpointing inside a piece,
 * where the piece's words are shared out by the voiced audio before and after), with that
 * stretch's voiced audio so its words come as they are said; the script's punctuation kept or
 * dropped.
 */
export function vendorWords(c: Case, rendered: ReturnType<typeof render>, punctuated: boolean): { text: string; voicedMs: number }[] {
  const { pcm, pauses } = rendered
  const cuts = [0, ...pauses.flatMap((p) => [p.fromMs, p.toMs]), (pcm.length * 1000) / PHONE_RATE]
  const texts: string[][] = [[]]
  for (const p of c.pieces) {
    if ('pauseMs' in p) texts.push([])
    else if ('say' in p) texts.at(-1)!.push(p.say)
  }
  const shown = (text: string) =>
    punctuated
      ? text
      : text
          .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
          .replace(/\s+/g, ' ')
          .trim()
  return texts.flatMap((said, k) => {
    const slice = pcm.subarray(Math.round((cuts[2 * k]! * PHONE_RATE) / 1000), Math.round((cuts[2 * k + 1]! * PHONE_RATE) / 1000))
    const words = shown(said.join(' ')).split(' ')
    const parts = [0, ...vendorSplits(slice), slice.length].map((at, n, all) => slice.subarray(at, all[n + 1] ?? at)).slice(0, -1)
    const total = voicedMs(slice, PHONE_RATE)
    let heard = 0
    let given = 0
    return parts.map((part, n) => {
      heard += voicedMs(part, PHONE_RATE)
      const upTo = n === parts.length - 1 ? words.length : Math.round((words.length * heard) / Math.max(1, total))
      const text = words.slice(given, upTo).join(' ')
      given = Math.max(given, upTo)
      return { text, voicedMs: voicedMs(part, PHONE_RATE) }
    })
  })
}
