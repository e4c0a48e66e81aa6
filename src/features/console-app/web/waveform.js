// A recording's waveform, drawn from the WAV itself (16-bit PCM, as the recorder writes it): one
// bar per pixel column (its peak), the part played in the accent colour, a click seeks there.

/** Samples of the first channel as numbers in [-1, 1], and the rate; null when not 16-bit PCM. */
export function readWav(buffer) {
  const view = new DataView(buffer)
  const tag = (at) => String.fromCharCode(view.getUint8(at), view.getUint8(at + 1), view.getUint8(at + 2), view.getUint8(at + 3))
  if (buffer.byteLength < 44 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return null
  let at = 12
  let format = null
  while (at + 8 <= buffer.byteLength) {
    const id = tag(at)
    const size = view.getUint32(at + 4, true)
    if (id === 'fmt ') format = { code: view.getUint16(at + 8, true), channels: view.getUint16(at + 10, true), rate: view.getUint32(at + 12, true), bits: view.getUint16(at + 22, true) }
    if (id === 'data' && format) {
      if (format.code !== 1 || format.bits !== 16) return null
      const frames = Math.floor(Math.min(size, buffer.byteLength - at - 8) / (2 * format.channels))
      const samples = new Float32Array(frames)
      for (let i = 0; i < frames; i++) samples[i] = view.getInt16(at + 8 + i * 2 * format.channels, true) / 32768
      return { samples, rate: format.rate, seconds: frames / format.rate }
    }
    at += 8 + size + (size % 2)
  }
  return null
}

/** Peaks per column: the loudest sample in each slice. */
export function peaks(samples, columns) {
  const out = new Float32Array(columns)
  const per = samples.length / columns
  for (let c = 0; c < columns; c++) {
    let peak = 0
    const end = Math.min(samples.length, Math.floor((c + 1) * per))
    for (let i = Math.floor(c * per); i < end; i++) {
      const v = Math.abs(samples[i])
      if (v > peak) peak = v
    }
    out[c] = peak
  }
  return out
}

/** Draws into `canvas` and keeps it in step with `audio`; returns a stop function. */
export function waveform(canvas, audio, wav) {
  const ratio = window.devicePixelRatio || 1
  const width = canvas.clientWidth || 600
  const height = canvas.clientHeight || 80
  canvas.width = Math.round(width * ratio)
  canvas.height = Math.round(height * ratio)
  const g = canvas.getContext('2d')
  g.scale(ratio, ratio)
  const bars = peaks(wav.samples, Math.max(1, Math.floor(width / 2)))
  // Quiet recordings are scaled up so their shape shows.
  const top = Math.max(0.05, ...bars)
  const style = getComputedStyle(canvas)
  const played = style.getPropertyValue('--played').trim() || '#0b5cad'
  const rest = style.getPropertyValue('--unplayed').trim() || '#6b7280'
  let frame = 0
  const draw = () => {
    const done = audio.duration ? audio.currentTime / audio.duration : 0
    g.clearRect(0, 0, width, height)
    bars.forEach((v, i) => {
      const x = i * 2
      const bar = Math.max(1, (v / top) * (height - 4))
      g.fillStyle = x / width <= done ? played : rest
      g.fillRect(x, (height - bar) / 2, 1.5, bar)
    })
  }
  const tick = () => {
    draw()
    frame = audio.paused ? 0 : requestAnimationFrame(tick)
  }
  const seek = (e) => {
    const box = canvas.getBoundingClientRect()
    if (audio.duration) audio.currentTime = ((e.clientX - box.left) / box.width) * audio.duration
    draw()
  }
  audio.addEventListener('play', tick)
  audio.addEventListener('seeked', draw)
  audio.addEventListener('timeupdate', () => frame === 0 && draw())
  canvas.addEventListener('click', seek)
  draw()
  return () => cancelAnimationFrame(frame)
}
