/*
 * The call's audio in the browser's audio thread (AudioWorklet):
 * - `mic-capture` cuts the microphone into 20 ms frames of 16-bit PCM (the bridge's frame size);
 * - `agent-player` plays the agent's audio through a small jitter buffer: it starts once 60 ms
 *   are queued (three 20 ms network frames of slack) or a mark says the chunk is whole, reports
 *   each mark when the audio before it has played, and on `clear` drops everything at once
 *   (barge-in), reporting the pending marks as cleared — as Twilio does.
 */
/* global sampleRate, registerProcessor, AudioWorkletProcessor */
class MicCapture extends AudioWorkletProcessor {
  constructor() {
    super()
    this.size = Math.round(sampleRate / 50)
    this.frame = new Int16Array(this.size)
    this.filled = 0
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0]
    if (!input) return true
    for (let i = 0; i < input.length; i++) {
      const s = Math.max(-1, Math.min(1, input[i]))
      this.frame[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff
      if (this.filled === this.size) {
        this.port.postMessage(this.frame, [this.frame.buffer])
        this.frame = new Int16Array(this.size)
        this.filled = 0
      }
    }
    return true
  }
}

class AgentPlayer extends AudioWorkletProcessor {
  constructor() {
    super()
    this.queue = [] // Float32Array chunks and { mark } entries, in arrival order
    this.offset = 0 // read position in the head chunk
    this.buffered = 0 // samples queued
    this.playing = false
    this.prebuffer = Math.round(sampleRate * 0.06)
    this.port.onmessage = (e) => {
      const m = e.data
      if (m.type === 'audio') {
        this.queue.push(m.samples)
        this.buffered += m.samples.length
      } else if (m.type === 'mark') this.queue.push({ mark: m.name })
      else if (m.type === 'clear') {
        for (const item of this.queue) if (item.mark) this.port.postMessage({ type: 'mark', name: item.mark, cleared: true })
        this.queue = []
        this.offset = 0
        this.buffered = 0
        this.playing = false
      }
    }
  }
  process(_inputs, outputs) {
    const out = outputs[0][0]
    if (!this.playing && (this.buffered >= this.prebuffer || this.queue.some((q) => q.mark))) this.playing = true
    let written = 0
    while (this.playing && written < out.length && this.queue.length) {
      const head = this.queue[0]
      if (head.mark) {
        this.port.postMessage({ type: 'mark', name: head.mark })
        this.queue.shift()
        continue
      }
      const n = Math.min(out.length - written, head.length - this.offset)
      out.set(head.subarray(this.offset, this.offset + n), written)
      written += n
      this.offset += n
      this.buffered -= n
      if (this.offset === head.length) {
        this.queue.shift()
        this.offset = 0
      }
    }
    // Ran dry: wait for the buffer to fill again rather than stutter.
    if (this.playing && !this.queue.length) this.playing = false
    if (written) this.port.postMessage({ type: 'played', samples: written })
    return true
  }
}

registerProcessor('mic-capture', MicCapture)
registerProcessor('agent-player', AgentPlayer)
