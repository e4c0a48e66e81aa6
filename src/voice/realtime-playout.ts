/**
 * The line's side of a speech-to-speech call (realtime-session.ts): the model's μ-law goes to the
 * line as it comes, each 100 ms followed by a mark, and the line's mark echoes say how much of each
 * item the caller has heard: what a barge-in truncates the item to. The model makes audio faster
 * than real time and the line (Twilio, the sandbox) buffers it, so nothing is paced here; a
 * `clear` drops what the line still holds, and its marks echoed after it are not counted as heard.
 */
import { decodeMulaw, PHONE_RATE } from './codecs'
import type { OutboundFrame } from './frames'
import { cutAt } from './heard-text'

/** A mark every 100 ms of audio: a barge-in's cut is within 100 ms of what was heard, as the cascaded playout's (playout.ts). */
export const MARK_EVERY_MS = 100
const MARK_SAMPLES = (PHONE_RATE * MARK_EVERY_MS) / 1000
const PREFIX = 'rt'

interface Item {
  id: string
  sentMs: number
  heardMs: number
  /** Samples since the last mark. */
  pending: number
  cut: boolean
}

export class RealtimePlayout {
  private readonly items = new Map<string, Item>()
  private readonly order: string[] = []
  private seq = 0
  private waiters: (() => void)[] = []

  constructor(
    private readonly send: (f: OutboundFrame) => boolean,
    private readonly record?: (pcm: Int16Array, rate: number) => void,
  ) {}

  /** An audio delta of item `id` (μ-law bytes at 8 kHz). */
  audio(id: string, mulaw: Uint8Array): void {
    let item = this.items.get(id)
    if (!item) {
      item = { id, sentMs: 0, heardMs: 0, pending: 0, cut: false }
      this.items.set(id, item)
      this.order.push(id)
    }
    if (item.cut) return
    const pcm = decodeMulaw(mulaw)
    this.record?.(pcm, PHONE_RATE)
    let at = 0
    while (at < pcm.length) {
      const take = Math.min(pcm.length - at, MARK_SAMPLES - item.pending)
      this.send({ kind: 'audio', pcm: pcm.subarray(at, at + take), sampleRate: PHONE_RATE })
      at += take
      item.pending += take
      item.sentMs += (take * 1000) / PHONE_RATE
      if (item.pending === MARK_SAMPLES) this.mark(item)
    }
  }

  /** The item's audio is all sent: a last mark for its tail. */
  done(id: string): void {
    const item = this.items.get(id)
    if (item && !item.cut && item.pending > 0) this.mark(item)
    this.settle()
  }

  private mark(item: Item): void {
    item.pending = 0
    this.send({ kind: 'mark', name: `${PREFIX}:${++this.seq}:${item.id}:${Math.round(item.sentMs)}` })
  }

  /** A mark the line echoed: the caller heard the audio before it. Answers the item it marks, if it still plays. */
  echoed(name: string): string | null {
    const [prefix, , id, ms] = name.split(':')
    const item = prefix === PREFIX && id ? this.items.get(id) : undefined
    if (!item || item.cut) return null
    item.heardMs = Math.max(item.heardMs, Number(ms))
    this.settle()
    return item.id
  }

  /**
   * A response's words as the caller heard them, from its items' transcripts: an item cut by a
   * barge-in (or still playing, or unplayed at the call's end when `closing`) up to its last heard word.
   */
  heardText(items: Map<string, string>, closing = false): string {
    const said = [...items].map(([id, text]) => {
      const heard = this.heardOf(id)
      const cut = heard.cut || (closing && heard.heardMs < heard.sentMs - 0.5)
      return cut ? cutAt({ text, samples: heard.sentMs, complete: false }, heard.heardMs) : text
    })
    return said.filter(Boolean).join(' ').trim()
  }

  /** The words heard so far of a response still playing. */
  hearingText(items: Map<string, string>): string {
    return this.heardText(items, true)
  }

  /** The item playing now, with how much of it was heard; null when everything sent was heard. */
  get playing(): { id: string; heardMs: number; sentMs: number } | null {
    for (const id of this.order) {
      const item = this.items.get(id)!
      if (!item.cut && item.sentMs - item.heardMs > 0.5) return { id, heardMs: item.heardMs, sentMs: item.sentMs }
    }
    return null
  }

  /** How much of item `id` the caller heard, ms. */
  heardOf(id: string): { heardMs: number; sentMs: number; cut: boolean } {
    const item = this.items.get(id)
    return item ? { heardMs: item.heardMs, sentMs: item.sentMs, cut: item.cut } : { heardMs: 0, sentMs: 0, cut: false }
  }

  /** Barge-in: the line drops what it holds; the items still playing end where they were heard. Returns the one cut, if any. */
  clear(): { id: string; heardMs: number } | null {
    const playing = this.playing
    if (!playing) return null
    this.send({ kind: 'clear' })
    for (const id of this.order) {
      const item = this.items.get(id)!
      if (item.sentMs - item.heardMs > 0.5) item.cut = true
    }
    this.settle()
    return { id: playing.id, heardMs: playing.heardMs }
  }

  /** Item `id` ends where it was heard (a barge-in while the model was still making it, the line caught up). */
  cut(id: string): { id: string; heardMs: number } | null {
    const item = this.items.get(id)
    if (!item || item.cut) return null
    item.cut = true
    return { id, heardMs: item.heardMs }
  }

  /** Resolves once the caller has heard everything sent (or it was cleared). */
  played(): Promise<void> {
    if (!this.playing) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private settle(): void {
    if (this.playing) return
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }
}
